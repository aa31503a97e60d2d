"""FedNMap's deterministic worst cases over the assumption class (PEP): the encoding, the family in
``fedbounds check``, the evidence grid, the C_0 window, replays, the PEPit-style examples and the prove pass."""
