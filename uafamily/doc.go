// Package uafamily tells a user agent's browser family, OS family and
// device type (Parse), from the product tokens browsers send, in a fixed
// order.
//
// TODO: full doc.
package uafamily
