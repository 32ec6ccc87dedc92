"""Report helpers behind the notebooks: every cell of ``notebooks/*.ipynb`` calls one function here.

Modules: :mod:`.params` (notebook parameters, validated), :mod:`.tables`
(pandas tables), :mod:`.explain` (explanations written from the data),
:mod:`.curves` and :mod:`.figures` (plots and the numbers behind them),
:mod:`.caveats`, :mod:`.results` (the eval-results.json artifact), :mod:`.explore`
(the exploration notebook), :mod:`.display` (how results show in a notebook) and
:mod:`.build` (``python -m agentmemory.report.build``, what ``make report`` runs), :mod:`.render` (running and
rendering one notebook), :mod:`.shipped` (the shipped notebooks, where an installation keeps them) and
:mod:`.own_report` (``agentmemory report``: a shipped or one's own notebook with one's parameters).

For the collection and sweep reports: :mod:`.inputs` (what was loaded,
skipped and repaired), :mod:`.stats` (bootstrap intervals and paired
comparisons in words), :mod:`.hardest` (the hardest queries), :mod:`.ranks`
(the distribution of first-relevant ranks), :mod:`.ties` (queries whose tied
scores straddle the cutoff, and how far each measure could move) and
:mod:`.sweeps` (k and seed sweeps, and how much a small evaluation moves).

For the answers report (``answers.ipynb``): :mod:`.answer_report` (the verdict, the sections on imported
answer files) and :mod:`.answer_figures` (its plots).
"""
