"""Data sets: the paper's streams, their generators, ARFF reading and the protocol's preprocessing.

* :func:`load` / :func:`list_streams` -- the twelve streams of the paper's Table 1 by name.
* :func:`load_novelty` / :func:`list_novelty_streams` -- novelty streams: labels that the
  labelled set never shows appear in the stream.
* :func:`moa_spherical`, :func:`read_multilabel` and the base generators -- synthetic streams.
* :func:`load_arff`, :func:`iter_arff` -- Mulan and MEKA ARFF files (dense or sparse, compressed).
* :func:`load_file` -- a data file of one's own (ARFF or .npz) as a stream (docs/your-data.md).
* :func:`filter_labels`, :func:`drop_unlabelled`, :func:`balanced_initial_split`,
  :func:`prefix_split`, :func:`minmax_scale` -- the protocol's preprocessing.
"""

from ._arff import ArffChunkIterator, ArffError, MultilabelDataset, iter_arff, load_arff
from ._files import DataFile, load_file
from ._generators import (
    HyperplaneGenerator,
    RandomRBFGenerator,
    RandomTreeGenerator,
    WaveformGenerator,
    moa_spherical,
    read_multilabel,
)
from ._novelty_streams import (
    NOVELTY_STREAMS,
    NoveltyDataset,
    NoveltyEntry,
    list_novelty_streams,
    load_novelty,
)
from ._preprocess import (
    InitialSplit,
    balanced_initial_set,
    balanced_initial_split,
    drop_unlabelled,
    filter_labels,
    minmax_scale,
    prefix_split,
)
from ._registry import TABLE1, StreamDataset, TableEntry, list_streams, load

__all__ = [
    "NOVELTY_STREAMS",
    "NoveltyDataset",
    "NoveltyEntry",
    "list_novelty_streams",
    "load_novelty",
    "TABLE1",
    "HyperplaneGenerator",
    "RandomRBFGenerator",
    "RandomTreeGenerator",
    "StreamDataset",
    "TableEntry",
    "WaveformGenerator",
    "list_streams",
    "load",
    "moa_spherical",
    "read_multilabel",
    "ArffChunkIterator",
    "ArffError",
    "InitialSplit",
    "MultilabelDataset",
    "balanced_initial_set",
    "balanced_initial_split",
    "drop_unlabelled",
    "filter_labels",
    "iter_arff",
    "load_arff",
    "load_file",
    "DataFile",
    "minmax_scale",
    "prefix_split",
]
