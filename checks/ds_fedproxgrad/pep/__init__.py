"""DS FedProxGrad's deterministic worst cases over the assumption class (PEP): the encoding of Lemma 5.2's
round, its family in ``fedbounds check`` and the PEPit-style examples."""
