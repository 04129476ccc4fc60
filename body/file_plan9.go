package body

// errnoStatus: Plan 9's errors are strings, not numbers, so the reasons the other systems tell
// apart (a path through a file, an escape from the root, a failure of the system) cannot be;
// all are answered as what is not reachable.
func errnoStatus(err error) int { return 404 }
