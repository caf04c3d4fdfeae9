// Command noroots lacks the CA roots import: the image build must refuse it.
package main

import "fmt"

func main() { fmt.Println("no CA roots") }
