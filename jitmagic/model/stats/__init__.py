"""The one significance rule, its verdicts, and seconds and ratios as a person reads them."""
