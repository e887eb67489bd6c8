"""Loaders of the released benchmark files into the canonical format.

released.yaml / released.py  every external file declared once (URL, md5, benchmark, loader)
cxc, mcic, eccv, sugarcrepe, bivlc, bison  one loader module per benchmark (canonical DataFrames)
statistics                   dataset statistics regenerated from the files, beside the published ones
"""
