"""FedNMap's stochastic rounds (expected-Gram PEP): the encoding, Theorem 8's noise constants, the family in
``fedbounds check``, the replay and the speedup table of the certified noise coefficient."""
