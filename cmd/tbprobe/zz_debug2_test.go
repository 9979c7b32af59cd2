package main

import (
	"net/http"
	nethttptest "net/http/httptest"
)

func nethttptestNewServer(h http.Handler) *nethttptest.Server { return nethttptest.NewServer(h) }
