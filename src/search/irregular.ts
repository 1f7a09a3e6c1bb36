/**
 * Irregular English verb and noun forms mapped to their base before stemming, so that "went" and
 * "go", "ran" and "running", "met" and "meet", "children" and "child" share a term (a measured
 * lexical lever). Forms that are as often another word ("bit", "lay", "rose", "ground", "bound",
 * "wound", "lit", "lives", "leaves") are left out; "left" maps to "leave", its common sense in
 * conversations.
 */
const TABLE = `
arise arose arisen|awake awoke awoken|bear bore borne|beat beaten|become became|begin began begun
bend bent|bite bitten|bleed bled|blow blew blown|break broke broken|breed bred|bring brought
build built|burn burnt|buy bought|catch caught|choose chose chosen|cling clung|come came
creep crept|deal dealt|dig dug|draw drew drawn|dream dreamt|drink drank drunk|drive drove driven
eat ate eaten|fall fell fallen|feed fed|feel felt|fight fought|find found|flee fled|fly flew flown
forbid forbade forbidden|forget forgot forgotten|forgive forgave forgiven|freeze froze frozen
get got gotten|give gave given|go went gone|grow grew grown|hang hung|hear heard
hide hid hidden|hold held|keep kept|kneel knelt|know knew known|lead led|lean leant|learn learnt
leave left|lend lent|lose lost|make made|mean meant|meet met|mistake mistook mistaken|overcome overcame
pay paid|ride rode ridden|ring rang rung|run ran|say said|seek sought|see saw seen|sell sold
send sent|shake shook shaken|shine shone|shoot shot|show shown|shrink shrank shrunk|sing sang sung
sink sank sunk|sit sat|sleep slept|slide slid|speak spoke spoken|speed sped|spend spent|spin spun
spring sprang sprung|stand stood|steal stole stolen|stick stuck|sting stung|stink stank stunk
strike struck|strive strove striven|swear swore sworn|sweep swept|swim swam swum|swing swung
take took taken|teach taught|tear tore torn|tell told|think thought|throw threw thrown
understand understood|undertake undertook undertaken|wake woke woken|wear wore worn|weave wove woven
weep wept|win won|withdraw withdrew withdrawn|write wrote written
child children|man men|woman women|person people|foot feet|tooth teeth|goose geese|mouse mice
wife wives|knife knives|wolf wolves|half halves|shelf shelves|thief thieves|calf calves|loaf loaves
criterion criteria|phenomenon phenomena
`

/** Irregular form -> base word (lower case, plain Latin letters). */
export const IRREGULAR_FORMS: ReadonlyMap<string, string> = new Map(
  TABLE.trim().split(/[|\n]/).flatMap((entry) => {
    const [base, ...forms] = entry.trim().split(' ')
    return forms.map(form => [form, base!] as const)
  }),
)
