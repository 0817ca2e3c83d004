#!/usr/bin/python3
"""Parses Prometheus text-format scrapes with the Prometheus client library's own parser
(prometheus_client.parser.text_string_to_metric_families, Debian's python3-prometheus-client), for
kvprefix's metrics tests.

    prometheus_samples.py SCRAPE...

Prints one line per sample, tab-separated: the scrape's index (0 for the first file), the family's
type, the sample's name, its labels as name=value joined by ';' in name order, and its value (repr
of the float; 'nan' for NaN). A scrape the parser rejects fails the run (exit status 1, the
parser's error on standard error).
"""

import sys

from prometheus_client.parser import text_string_to_metric_families


def main():
    for i, path in enumerate(sys.argv[1:]):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        try:
            families = list(text_string_to_metric_families(text))
        except Exception as e:  # the parser's own error, whatever its type
            sys.exit("%s: the Prometheus parser rejects it: %r" % (path, e))
        for fam in families:
            for s in fam.samples:
                labels = ";".join("%s=%s" % (k, v) for k, v in sorted(s.labels.items()))
                print("%d\t%s\t%s\t%s\t%r" % (i, fam.type, s.name, labels, float(s.value)))


if __name__ == "__main__":
    main()
