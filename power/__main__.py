import sys

from power.sidecar import main

sys.exit(main())
