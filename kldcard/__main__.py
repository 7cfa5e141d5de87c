import sys

from kldcard.cli.main import main

sys.exit(main())
