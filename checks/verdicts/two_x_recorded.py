"""The 2x-detection records of the quick profile at seed 0, computed by :func:`fedbounds.checks.verdicts.two_x.from_report`
(regenerate: ``fedbounds check --profile quick --out DIR`` then ``python -m fedbounds.checks.verdicts.two_x DIR/report.json``)."""


RECORDED = {'ds.assumption.small_step': {'catcher': 'd',
                              'computed': True,
                              'profile': 'quick',
                              'why': 'worst slack x3.9 >= 2 over what the quick profile searched: a 2x tighter bound '
                                     'still holds there (loose)',
                              'worst_slack': 3.898816645469903},
 'ds.constant_step_floor': {'catcher': 'd',
                            'computed': True,
                            'profile': 'quick',
                            'why': 'worst slack x60.8 >= 2 over what the quick profile searched: a 2x tighter bound '
                                   'still holds there (loose)',
                            'worst_slack': 60.76968106351359},
 'ds.corollary_decaying': {'catcher': 'd',
                           'computed': True,
                           'profile': 'quick',
                           'why': 'worst slack x108 >= 2 over what the quick profile searched: a 2x tighter bound '
                                  'still holds there (loose)',
                           'worst_slack': 107.88529659029292},
 'ds.corollary_ii': {'catcher': 'd',
                     'computed': True,
                     'profile': 'quick',
                     'why': 'worst slack x46.7 >= 2 over what the quick profile searched: a 2x tighter bound still '
                            'holds there (loose)',
                     'worst_slack': 46.65550525472037},
 'ds.lemma5_1': {'catcher': 'a',
                 'computed': True,
                 'profile': 'quick',
                 'why': "worst slack x1.87 < 2: a bound 2x tighter is violated on the check's own experiment (quick "
                        'profile)',
                 'worst_slack': 1.873869127567422},
 'ds.lemma5_2': {'catcher': 'd',
                 'computed': True,
                 'profile': 'quick',
                 'why': 'worst slack x3.23 >= 2 over what the quick profile searched: a 2x tighter bound still holds '
                        'there (loose)',
                 'worst_slack': 3.2282234505083856},
 'ds.pep.absorption': {'catcher': 'd',
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
 'ds.spep.G2': {'catcher': 'd',
                'computed': True,
                'profile': 'quick',
                'why': 'worst slack x3.15 >= 2 over what the quick profile searched: a 2x tighter bound still holds '
                       'there (loose)',
                'worst_slack': 3.150081824765518},
 'ds.spep.sigma2': {'catcher': 'd',
                    'computed': True,
                    'profile': 'quick',
                    'why': 'worst slack x2.8 >= 2 over what the quick profile searched: a 2x tighter bound still '
                           'holds there (loose)',
                    'worst_slack': 2.7999998288051806},
 'ds.theorem5_3': {'catcher': 'd',
                   'computed': True,
                   'profile': 'quick',
                   'why': 'worst slack x43.7 >= 2 over what the quick profile searched: a 2x tighter bound still '
                          'holds there (loose)',
                   'worst_slack': 43.746683622970764},
 'erratum.constant_gamma_floor': {'catcher': 'a',
                                  'computed': True,
                                  'profile': 'quick',
                                  'why': "worst slack x1.98 < 2: a bound 2x tighter is violated on the check's own "
                                         'experiment (quick profile)',
                                  'worst_slack': 1.9772230467406255},
 'erratum.ds_inexactness_gradient_step': {'catcher': 'a',
                                          'computed': True,
                                          'profile': 'quick',
                                          'why': 'worst slack x1.04 < 2: a bound 2x tighter is violated on the '
                                                 "check's own experiment (quick profile)",
                                          'worst_slack': 1.0368246608924172},
 'erratum.ds_phi_prefix': {'catcher': 'n/a',
                           'computed': True,
                           'profile': 'quick',
                           'why': 'an erratum: false as printed, the check shows the violation',
                           'worst_slack': -2.022260499899632},
 'fednmap.lyapunov': {'catcher': 'd',
                      'computed': True,
                      'profile': 'quick',
                      'why': "the check's verdict is inconclusive (slack 0.012193814459697805): no measured margin to "
                             'test',
                      'worst_slack': 0.012193814459697805},
 'fednmap.nat_nor_relation': {'catcher': 'a',
                              'computed': True,
                              'profile': 'quick',
                              'why': "worst slack x1 < 2: a bound 2x tighter is violated on the check's own "
                                     'experiment (quick profile)',
                              'worst_slack': 0.9999999999999567},
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
                                   'worst_slack': 7.4487714826794},
 'fednmap.spep.constant_12100': {'catcher': 'd',
                                 'computed': True,
                                 'profile': 'quick',
                                 'why': 'worst slack x122 >= 2 over what the quick profile searched: a 2x tighter '
                                        'bound still holds there (loose); the measured room is pinned by '
                                        'test_theorem8_constants_rooms_are_pinned (a 2x change of 12100 is caught as '
                                        'evidence drift, not by the verdict)',
                                 'worst_slack': 121.54198067072302},
 'fednmap.spep.constant_36': {'catcher': 'd',
                              'computed': True,
                              'profile': 'quick',
                              'why': 'worst slack x98.3 >= 2 over what the quick profile searched: a 2x tighter '
                                     'bound still holds there (loose); the measured room is pinned by '
                                     'test_theorem8_constants_rooms_are_pinned (a 2x change of 36 is caught as '
                                     'evidence drift, not by the verdict)',
                              'worst_slack': 98.33121455329386},
 'fednmap.spep.lyapunov_windows': {'catcher': 'd',
                                   'computed': True,
                                   'profile': 'quick',
                                   'why': 'worst slack x105 >= 2 over what the quick profile searched: a 2x tighter '
                                          'bound still holds there (loose)',
                                   'worst_slack': 105.48495301293161},
 'fednmap.theorem5.conditions': {'catcher': 'd',
                                 'computed': True,
                                 'profile': 'quick',
                                 'why': 'worst slack x4.05 >= 2 over what the quick profile searched: a 2x tighter '
                                        'bound still holds there (loose)',
                                 'worst_slack': 4.049717256952397},
 'fednmap.theorem5.rate': {'catcher': 'd',
                           'computed': True,
                           'profile': 'quick',
                           'why': "the check's verdict is holds (slack nan): no measured margin to test",
                           'worst_slack': 'nan'},
 'fednmap.theorem8': {'catcher': 'd',
                      'computed': True,
                      'profile': 'quick',
                      'why': 'worst slack x2.82e+04 >= 2 over what the quick profile searched: a 2x tighter bound '
                             'still holds there (loose)',
                      'worst_slack': 28151.3101238984},
 'fednmap.theorem8.complexity': {'catcher': 'a',
                                 'computed': True,
                                 'profile': 'quick',
                                 'why': "worst slack x0.988 < 2: a bound 2x tighter is violated on the check's own "
                                        'experiment (quick profile)',
                                 'worst_slack': 0.9884989240878023},
 'fednmap.theorem8.complexity_inside': {'catcher': 'd',
                                        'computed': False,
                                        'profile': 'quick',
                                        'why': 'the verdict is a slope (rounds ~ 1/(nQ)): a 2x error in a printed '
                                               'constant rescales every step alike and leaves it unchanged; the '
                                               "steps are checked against the theory's bounds by "
                                               'tests/checks/fednmap/test_inside_steps.py',
                                        'worst_slack': 1.0000164734679882},
 'fednmap.theorem8.floor': {'catcher': 'd',
                            'computed': True,
                            'profile': 'quick',
                            'why': 'worst slack x8.84e+04 >= 2 over what the quick profile searched: a 2x tighter '
                                   'bound still holds there (loose)',
                            'worst_slack': 88418.43638876462}}
