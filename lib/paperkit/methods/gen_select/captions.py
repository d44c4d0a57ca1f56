"""Short image captions by category, written for paperkit's semi-synthetic text instance (in the
spirit of the MS-COCO categories of the paper's Figure 1): 8 categories × 40 captions, each a subject
phrase combined with a scene phrase of its category."""

from __future__ import annotations

_PARTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "dog": (("A golden retriever", "A small terrier", "A black labrador", "A sleepy beagle", "A muddy sheepdog",
             "A puppy with floppy ears", "A husky", "An old greyhound"),
            ("chasing a tennis ball across the lawn", "resting on a porch mat", "splashing in a shallow creek",
             "waiting by the front door with a leash", "catching a frisbee in the park")),
    "car": (("A red sports car", "A vintage convertible", "A dusty pickup truck", "A white sedan",
             "A yellow taxi", "An electric hatchback", "A rally car", "A station wagon"),
            ("parked on a rainy city street", "driving along a coastal highway", "stopped at a gas station",
             "in a showroom under bright lights", "crossing a mountain pass at dusk")),
    "train": (("A steam locomotive", "A high-speed train", "A freight train", "A commuter train",
               "A red tram", "A subway car", "A narrow-gauge railway", "A night sleeper train"),
              ("pulling into a crowded platform", "crossing a stone viaduct", "winding through snowy hills",
               "waiting at an empty station", "passing fields of sunflowers")),
    "pizza": (("A margherita pizza", "A pepperoni pizza", "A slice of cheese pizza", "A wood-fired pizza",
               "A pizza with mushrooms and olives", "A deep-dish pizza", "A half-eaten pizza", "A veggie pizza"),
              ("on a wooden cutting board", "in an open cardboard box", "next to a glass of soda",
               "coming out of a brick oven", "on a checkered tablecloth")),
    "beach": (("A sandy beach", "A rocky shoreline", "A row of beach umbrellas", "A lifeguard tower",
               "Two surfers", "A family building a sandcastle", "A wooden pier", "Seagulls"),
              ("at sunset with gentle waves", "under a cloudy sky", "on a crowded summer afternoon",
               "seen from the dunes", "beside clear turquoise water")),
    "kitchen": (("A modern kitchen", "A cluttered kitchen counter", "A stainless steel stove", "A kitchen sink",
                 "A chef chopping vegetables", "A fridge covered in magnets", "A breakfast table",
                 "A pot of soup"),
                ("with morning light through the window", "after a big family dinner",
                 "with copper pans hanging above", "in a small city apartment", "with a bowl of fresh fruit")),
    "bird": (("A blue jay", "A flock of pigeons", "A red cardinal", "A heron", "A tiny hummingbird",
              "A pair of swans", "An owl", "A parrot with green feathers"),
             ("perched on a snowy branch", "wading in a quiet pond", "feeding from a garden feeder",
              "flying over a wheat field", "sitting on a fence post")),
    "city": (("A busy intersection", "A row of brick townhouses", "A skyline of glass towers", "A street market",
              "A cyclist in traffic", "A crowded sidewalk", "A neon-lit alley", "A double-decker bus"),
             ("at rush hour", "on a foggy morning", "after heavy rain", "lit up at night",
              "on a quiet Sunday")),
}

CATEGORIES = tuple(_PARTS)


def captions() -> tuple[list[str], list[int]]:
    """(captions, category index of each): 40 per category, in a fixed order."""
    texts, labels = [], []
    for k, (subjects, scenes) in enumerate(_PARTS.values()):
        for s in subjects:
            for scene in scenes:
                texts.append(f"{s} {scene}.")
                labels.append(k)
    return texts, labels
