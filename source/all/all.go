// Package all registers every built-in transport with package source:
// "file" (and plain paths) for source/mmap, "http" and "https" for
// source/http, and "s3" for source/s3. Front ends import it for its side
// effect:
//
//	import _ "github.com/tbfs/tbfs/source/all"
package all

import (
	_ "github.com/tbfs/tbfs/source/http" // http, https
	_ "github.com/tbfs/tbfs/source/mmap" // file and plain paths
	_ "github.com/tbfs/tbfs/source/s3"   // s3
)
