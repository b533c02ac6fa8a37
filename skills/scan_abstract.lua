-- scan_abstract: look around for something only the LLM can recognise
-- ("something to cut paper with"), asking about each view.
--
-- probe sends the question with the current scene description; an answer
-- of False means "not here", anything else is the answer (often an object
-- name such as scissors_1 that the plan can go to).
return {
  name = "scan_abstract",
  description = "turn in 45 degree steps (one full circle), asking the question about each "
    .. "view; returns the first answer that is not False, or False",
  args = {{name = "question", type = "str"}},
  returns = "any",
  run = function(question)
    for _ = 1, 8 do
      local answer = probe(question)
      if answer ~= false and answer ~= nil and answer ~= "" then return answer end
      turn_cw(45)
    end
    return false
  end,
}
