"""sve-predict --boundary-dir: one map file per image, never inside the images folder."""

import pytest

from paperkit.core.errors import UsageError
from paperkit.methods.sve.run import boundary_files


def test_one_file_per_image_even_when_stems_collide(tmp_path):
    files = boundary_files(["a.png", "b.jpg"], tmp_path / "e", tmp_path / "imgs")
    assert [p.name for p in files] == ["a_boundary.png", "b_boundary.png"]
    # a.png and a.jpg both wrote a_boundary.png: one map was lost (found by an audit)
    files = boundary_files(["a.png", "a.jpg"], tmp_path / "e", tmp_path / "imgs")
    assert [p.name for p in files] == ["a.png_boundary.png", "a.jpg_boundary.png"]


def test_the_images_folder_is_refused(tmp_path):
    (tmp_path / "imgs").mkdir()
    with pytest.raises(UsageError, match="is the --images folder"):
        boundary_files(["a.png"], tmp_path / "imgs" / ".", tmp_path / "imgs")
