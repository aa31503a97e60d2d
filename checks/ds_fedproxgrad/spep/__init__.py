"""DS FedProxGrad's stochastic Lemma 5.2 (expected-Gram PEP): the encoding and its family in ``fedbounds check``."""
