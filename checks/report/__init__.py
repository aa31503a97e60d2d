"""What a reader sees: the printed table, ``report.json``, the HTML page, the plots, progress and quiet logs
(docs/architecture.md)."""
