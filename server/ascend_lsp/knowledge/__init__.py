"""The facts in mappings/: this package is their only reader; everything else asks it."""
