"""The 2x-detection records of the quick profile at seed 0, computed by :func:`fedbounds.checks.core.two_x.from_report`
(regenerate: ``fedbounds check --profile quick --out DIR`` then ``python -m fedbounds.checks.core.two_x DIR/report.json``)."""


RECORDED = {'ds.pep.absorption': {'catcher': 'd',
                       'computed': True,
                       'profile': 'quick',
                       'why': 'worst slack x2.05 >= 2 over what the quick profile searched: a 2x tighter bound still '
                              'holds there (loose)',
                       'worst_slack': 2.0468750000000004},
 'ds.pep.lemma5_2': {'catcher': 'd',
                     'computed': True,
                     'profile': 'quick',
                     'why': 'worst slack x2.25 >= 2 over what the quick profile searched: a 2x tighter bound still '
                            'holds there (loose)',
                     'worst_slack': 2.2543931782407673},
 'fednmap.pep.largest_step': {'catcher': 'b',
                              'computed': True,
                              'profile': 'quick',
                              'why': "worst slack x1.03 < 2: a bound 2x tighter is violated on the check's own "
                                     'certified worst case (quick profile)',
                              'worst_slack': 1.0284747573817403},
 'fednmap.pep.lyapunov_constants': {'catcher': 'd',
                                    'computed': True,
                                    'profile': 'quick',
                                    'why': 'worst slack x7.21 >= 2 over what the quick profile searched: a 2x '
                                           'tighter bound still holds there (loose)',
                                    'worst_slack': 7.213479585279312},
 'fednmap.pep.theorem8_exponent': {'catcher': 'd',
                                   'computed': True,
                                   'profile': 'quick',
                                   'why': 'worst slack x7.45 >= 2 over what the quick profile searched: a 2x tighter '
                                          'bound still holds there (loose)',
                                   'worst_slack': 7.4487714826794}}
