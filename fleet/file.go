package fleet

import "github.com/spoold/spoold/internal/fileutil"

// Size bounds of the files this package reads (each read with
// fileutil.ReadRegular). A targets file of 100,000 devices is about 10 MB;
// a secret is one short line.
const (
	maxConfigFile = 64 << 20
	maxSecretFile = 64 << 10
)

// readSecretFile reads a secret file: regular, at most maxSecretFile bytes.
func readSecretFile(path string) ([]byte, error) { return fileutil.ReadRegular(path, maxSecretFile) }
