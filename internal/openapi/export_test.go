package openapi

// Described are the operations this package describes, for the tests.
var Described = descriptions
