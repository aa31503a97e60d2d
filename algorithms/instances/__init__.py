"""Problem instances that know their constants (each exact or a stated bound)."""
