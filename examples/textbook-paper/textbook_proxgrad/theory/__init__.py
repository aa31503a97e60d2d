"""The textbook proximal gradient rate, theory layer (Beck and Teboulle, SIAM J. Imaging Sci. 2009)."""

KEY = "textbook"
PAPER = "Proximal gradient, textbook (Beck and Teboulle 2009)"
