"""The PEP machinery, shared by both papers; the per-paper encodings live in ``checks/<paper>/pep*.py``.

- :mod:`fedbounds.checks.pep.solve`: a PEP solved by two solvers (Clarabel, SCS) into a :class:`Certificate` whose
  status says whether they agree (``certified``), and PEPit's dual-feasibility figures for each solve;
- :mod:`fedbounds.checks.pep.symmetric`: the client-symmetric block form (one block per client class, so n up to 64
  and beyond costs the same as n = 2);
- :mod:`fedbounds.checks.pep.stochastic`: the expected-Gram encoding of additive gradient noise (noise leaves,
  orthogonality and variance constraints) and the finite-scenario lower bound;
- :mod:`fedbounds.checks.pep.sgd`: one SGD step, the stochastic encoding's validation against its closed form and
  against PEPit's finite-sum ``wc_sgd`` (where, and why, the noise models differ);
- :mod:`fedbounds.checks.pep.certificate`: a certified worst case turned into an exact rational certificate, and
  :mod:`fedbounds.checks.pep.verify_certificate`, which re-checks one with the standard library alone;
- :mod:`fedbounds.checks.pep.precondition`: exact rows (PEPit's, or a builder's own) solved over one PSD block per
  component with an exact power-of-two rescaling, and proved on the rescaled rows: what makes the printed steps
  solvable.
"""
