"""Report writers (JSON, Markdown, CSV) shared by the CLI and the dashboard downloads."""
