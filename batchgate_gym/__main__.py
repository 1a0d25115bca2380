import sys

from batchgate_gym.app.cli import main

sys.exit(main())
