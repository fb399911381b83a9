//! Table rendering (`as=Table`) for `kubectl get`: CRD printer columns and built-in printers.
