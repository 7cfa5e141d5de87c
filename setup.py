"""Ship the top-level ``schemas/`` and ``templates/`` inside the wheel as ``kldcard/_data/``.

The user asked for both folders at the repository's top level; an installed kldcard still needs them
(``pip install .`` then ``kldcard`` must work outside the checkout), so the build copies them in.
An editable install reads them from the checkout instead (see ``kldcard/resources.py``).
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithData(build_py):
    def run(self) -> None:
        super().run()
        root = Path(__file__).parent
        for folder in ("schemas", "templates"):
            target = Path(self.build_lib) / "kldcard" / "_data" / folder
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(root / folder, target)


setup(cmdclass={"build_py": BuildPyWithData})
