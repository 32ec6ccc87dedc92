"""Report helpers behind the notebooks: every cell of ``notebooks/*.ipynb`` calls one function here.

Modules: :mod:`.params` (notebook parameters, validated), :mod:`.tables`
(pandas tables), :mod:`.explain` (explanations written from the data),
:mod:`.curves` and :mod:`.figures` (plots and the numbers behind them),
:mod:`.caveats`, :mod:`.results` (the eval-results.json artifact), :mod:`.explore`
(the exploration notebook), :mod:`.display` (how results show in a notebook) and
:mod:`.build` (``python -m agentmemory.report.build``, what ``make report`` runs).
"""
