"""Notebooks to reports: the set-up every notebook calls first, the Papermill run, the offline HTML
with its provenance, the index page, and the headless-browser check of the reports."""
