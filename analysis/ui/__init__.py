"""The interactive explorer (ipywidgets) of notebooks/00_explore.ipynb."""
