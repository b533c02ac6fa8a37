-- TypeFly's "sweeping_abstract" (paper, Listing 8): turn in 45-degree steps,
-- asking the LLM about each view, until it names something.
return {
  name = "sweeping_abstract",
  description = "turn in steps, asking the question about each view; the answer or False",
  args = {{name = "question", type = "str"}},
  returns = "any",
  minispec = "8{_1=q,$1;?_1!=False{->_1}tc,45}->False",
}
