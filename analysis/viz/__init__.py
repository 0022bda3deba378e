"""Every chart of the suite: the theme, the heatmap and every chart builder, figures written with the
CSV of their numbers, and the print PDFs. altair and vl-convert are imported only when a chart is made."""
