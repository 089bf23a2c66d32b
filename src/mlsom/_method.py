"""The constants of the method: the variants, the robust variant's gains, bands and gate, and the
windows of what arriving labels teach (docs/method.md). The estimator (``_som``) and the table of
the state (``_schema``, whose ring lengths "W" and "P" they fix) both read them from here."""

#: the methods ``variant`` selects: the paper's, and the robust one (docs/method.md)
VARIANTS = ("paper", "robust")

#: robust variant: a kept unit is stale when its label's last ``STALE_FACTOR`` times n_j / n_b
#: training rows (n_j the label's rows, n_b the unit's) never reached it, where in a set in
#: random order every gap of a unit is about geometric with mean n_j / n_b and exceeds that
#: with probability about exp(-STALE_FACTOR)
STALE_FACTOR = 20

#: robust variant: after each instance of the online phase, the recent predicted cardinality
#: cbar moves by ACCEPTANCE_SMOOTHING times (labels predicted - cbar), and while cbar is more
#: than ACCEPTANCE_BAND times z0 away from z0 (the training set's cardinality), the Bayes test's
#: offset theta moves by ACCEPTANCE_GAIN times (labels predicted - z0)
ACCEPTANCE_GAIN = 0.01
ACCEPTANCE_SMOOTHING = 0.005
ACCEPTANCE_BAND = 0.1
#: robust variant, each label's own acceptance offset: its recent predicted rate moves by
#: ACCEPTANCE_SMOOTHING times (1 if predicted else 0, minus the rate), and while the rate is more
#: than LABEL_ACCEPTANCE_BAND times its training rate away from that rate, the label's offset
#: moves by ACCEPTANCE_GAIN times (1 if predicted else 0, minus the training rate)
LABEL_ACCEPTANCE_BAND = 0.3

#: robust variant, the drift gate: each label's recent mean of the instances it learns from in
#: the online phase moves by DRIFT_SMOOTHING times (x - mean); once it is farther from the
#: label's training mean than DRIFT_GATE times the training rows' root mean squared distance
#: from it, the label's map moves as a whole from then on: the grid neighbours of its winner by
#: eta exp(-g^2 / (2 sigma^2)), sigma = DRIFT_SIGMA times the grid side
DRIFT_SMOOTHING = 0.002
DRIFT_GATE = 0.7
DRIFT_SIGMA = 0.2

#: labels that arrive teach the decision rule too (docs/method.md): each label's acceptance
#: offset is chosen on the margins of its last MARGIN_WINDOW labelled entries (the length of
#: the state's rings of margins, _schema "W")
MARGIN_WINDOW = 500
#: the paired tests (of the corrections, corrections="tested", and of label persistence): the
#: model's last PAIR_WINDOW pairs decide (the length of their rings, _schema "P")
PAIR_WINDOW = 200
#: the values of ``corrections``
CORRECTIONS = ("strong", "tested")
#: the values of ``label_persistence``
PERSISTENCE = ("tested", "off")

#: novelty detection (``novelty=True``; docs/method.md, "New labels"): the test of an instance
#: uses the neurons as they stood at the start of its block of NOVELTY_BLOCK instances of the
#: online phase (blocks counted from its first instance, so chunking changes nothing)
NOVELTY_BLOCK = 1024
#: a neuron's radius: the largest distance of a training row it won, and at least
#: NOVELTY_RMS_FACTOR times their root mean square distance
NOVELTY_RMS_FACTOR = 1.5
#: the short-term memory of unexplained instances holds at most NOVELTY_BUFFER rows (the
#: length of the state's buffer, _schema "B"); past it, and past NOVELTY_MEMORY instances of
#: age, the oldest are forgotten: a group of NOVELTY_MIN_GROUP rows needs a burst of at least
#: NOVELTY_MIN_GROUP / NOVELTY_MEMORY (2 %) of the stream
NOVELTY_BUFFER = 2000
NOVELTY_MEMORY = 4_000
#: a search for new labels runs after every NOVELTY_CHECK unexplained instances; a group of
#: the memory becomes a pattern (a new label, or an extension of a label) only with at least
#: NOVELTY_MIN_GROUP rows; a search forms at most NOVELTY_MAX_GROUPS groups
NOVELTY_CHECK = 50
NOVELTY_MIN_GROUP = 80
NOVELTY_MAX_GROUPS = 8
#: a valid group whose centre is within NOVELTY_EXTENSION times a neuron's radius of it (the
#: neuron whose sphere's surface is nearest) extends that neuron's label; farther, it is a new
#: label (MINAS's threshold factor)
NOVELTY_EXTENSION = 1.1
#: k-means iterations of a search, at most
NOVELTY_KMEANS_ITER = 50
#: a new label that no instance was classified with for NOVELTY_FORGET instances of the online
#: phase is retired (its map removed, its column kept, never predicted again)
NOVELTY_FORGET = 20_000
#: at most NOVELTY_MAX_LABELS new labels: a search finds no more once they exist
NOVELTY_MAX_LABELS = 100
#: the seed of a search's k-means is (NOVELTY_SEED, the instance at which it runs)
NOVELTY_SEED = 0x6E6F76
#: with at least NOVELTY_SPLIT neurons in all, the test tries the quarter of them that won the
#: most rows first, and the others only on the rows those leave unexplained (the same answers)
NOVELTY_SPLIT = 64
