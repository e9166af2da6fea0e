package agent

import "errors"

// runWithParent: Windows has no exec that keeps the process ID, and the CLI
// starts its local Syncthing directly there.
func runWithParent([]string) error {
	return errors.New("with-parent is not available on Windows")
}
