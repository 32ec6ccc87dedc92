"""Files: reading inputs, atomic writes and the output plan, TREC files, numbers as text, the cache."""
