import sys

from testbench.bench.run import main

sys.exit(main())
