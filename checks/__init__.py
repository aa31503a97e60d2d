"""Checks: the papers' claims (from ``theory``) run against trajectories (from ``algorithms``)."""
