package battery

import (
	"bytes"
	_ "embed"
)

// The shipped rows and quotas, versioned with the code.
var (
	//go:embed rows.tsv
	shippedRows []byte
	//go:embed quota.tsv
	shippedQuotas []byte
)

// Shipped returns the battery's shipped rows.
func Shipped() ([]Row, error) {
	return ParseRows(bytes.NewReader(shippedRows), "battery/rows.tsv")
}

// ShippedQuotas returns the battery's quotas, newest version.
func ShippedQuotas() (*Quotas, error) {
	return ParseQuotas(bytes.NewReader(shippedQuotas), "battery/quota.tsv")
}
