from megalint.cli import main

raise SystemExit(main())
