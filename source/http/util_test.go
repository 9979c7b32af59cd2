package http_test

import "os"

func writeFile(name, text string) error { return os.WriteFile(name, []byte(text), 0o644) }
