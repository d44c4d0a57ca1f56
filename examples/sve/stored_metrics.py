"""Write the metrics stored inside the shipped sve-small checkpoint to a JSON file (for the reproduce claim)."""

import json
import sys

import torch

from paperkit.methods.sve.inputs import SHIPPED_MODEL

json.dump(torch.load(SHIPPED_MODEL, weights_only=True)["metrics"], open(sys.argv[1], "w"), indent=2)
