import sys

from testbench.demo.run import main

sys.exit(main())
