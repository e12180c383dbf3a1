from extender.cli import main

raise SystemExit(main())
