from streamtools.cli import main

raise SystemExit(main())
