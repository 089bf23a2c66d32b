"""Messages about a real stream's missing data files: each names every file missing, and the
command line's advice names the command's own options, never Python arguments."""

import re

import pytest

from mlsom._cli import main
from mlsom.datasets import load
from mlsom.experiment import run_experiment

SCENE_FILES = ["scene.arff", "scene-train.arff", "scene-test.arff", "scene.xml"]
# Python arguments (data_home=, streams=) that a command line message must not name
PYTHON_ARGUMENT = re.compile(r"\b\w+=")


@pytest.fixture(autouse=True)
def _no_data_folder(monkeypatch):
    monkeypatch.delenv("MLSOM_DATA", raising=False)


def _error(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("mlsom: error: ") and err.count("\n") == 1
    return err


def test_run_without_a_data_folder_names_its_own_options(capsys):
    err = _error(["run", "--stream", "Scene"], capsys)
    assert "no data folder is given" in err
    assert "--data-home" in err and "MLSOM_DATA" in err and "--stream" in err
    assert "--streams" not in err  # an option of experiment, not of run
    assert not PYTHON_ARGUMENT.search(err), err


def test_run_names_every_file_missing_from_the_folder(tmp_path, capsys):
    err = _error(["run", "--stream", "Scene", "--data-home", str(tmp_path)], capsys)
    missing = err.split("missing from ")[1].split(";")[0]
    assert str(tmp_path) in missing
    assert all(name in missing for name in SCENE_FILES), missing
    assert "found" not in err
    assert not PYTHON_ARGUMENT.search(err), err


def test_a_folder_with_some_files_names_those_missing_and_those_found(tmp_path, capsys):
    (tmp_path / "scene.xml").write_text("<labels/>")
    (tmp_path / "scene-train.arff").write_text("@relation s\n")
    err = _error(["run", "--stream", "Scene", "--data-home", str(tmp_path)], capsys)
    match = re.search(r"missing from (.*) and its sub-folder scene: (.*) \(found: (.*?)\);", err)
    assert match is not None, err
    assert match[1] == str(tmp_path)
    assert match[2] == "scene.arff, scene-test.arff"
    assert match[3] == "scene-train.arff, scene.xml"


def test_experiment_advice_names_experiment_options(tmp_path, capsys):
    argv = ["experiment", "--streams", "Scene", "Yeast", "--data-home", str(tmp_path)]
    err = _error([*argv, "--out", str(tmp_path / "exp"), "--no-progress"], capsys)
    assert "scene.xml" in err and "yeast.xml" in err
    assert "--streams" in err and "--data-home" in err
    assert not PYTHON_ARGUMENT.search(err), err


def test_demo_advice_names_the_environment_variable(capsys):
    err = _error(["demo", "--stream", "Scene", "--no-plot"], capsys)
    assert "MLSOM_DATA" in err and "--stream" in err
    assert "--data-home" not in err  # demo has no such option
    assert not PYTHON_ARGUMENT.search(err), err


def test_the_library_advice_names_python_arguments(tmp_path):
    with pytest.raises(FileNotFoundError) as exc:
        load("Scene", data_home=tmp_path)
    assert "data_home=" in str(exc.value) and "--" not in str(exc.value)
    assert all(name in str(exc.value) for name in SCENE_FILES)
    with pytest.raises(FileNotFoundError) as exc:
        run_experiment("quick", tmp_path / "exp", streams=["Scene"], methods=["mlsom"])
    assert "streams=" in str(exc.value) and "data_home=" in str(exc.value)
    assert "--" not in str(exc.value)
