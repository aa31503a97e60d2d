"""A textbook "paper" that exists only to test docs/adding-a-paper.md: the proximal gradient method's O(1/T)
rate on convex composite problems (Beck and Teboulle 2009, Theorem 3.1). One folder per layer, no edit to
shared code: the tests register these packages at run time."""
