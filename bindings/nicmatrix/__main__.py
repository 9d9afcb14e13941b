"""`python3 -m nicmatrix plot ...`: the package's command line (the same code as `nicmatrix plot`)."""
import sys

from . import plot


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] != "plot":
        print("usage: python3 -m nicmatrix plot FILE [FILE2] -o OUT [--kind heatmap|scatter|bars] [--metric M]",
              file=sys.stderr)
        return 2
    return plot.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
