/**
 * Light synonym groups of everyday English for query expansion: a query word of a group also
 * looks for the other words of its group, at a lower weight (`synonyms` in the index options).
 * Groups are strict equivalents of conversational English (informal and formal words for the same
 * thing, British and American spellings, a noun and its verb where the stemmer does not join
 * them), never broader or narrower words: "wife" is not "spouse", "dog" is not "pet". Written by
 * hand from general usage, not from any benchmark's answers.
 */
import { stemWord } from './text.ts'

const GROUPS = `
kid child|kiddo child|toddler child|mom mother mum mommy mummy|dad father daddy|grandma grandmother granny nana
grandpa grandfather granddad|grandkid grandchild|sis sister|bro brother|hubby husband|newborn baby infant
teen teenager adolescent|fiance fiancee|bestie friend|buddy pal friend|coworker colleague workmate
boss supervisor|job occupation|pup puppy|doggy doggo dog|kitty kitten|bunny rabbit
movie film|tv television|photo photograph picture pic|telly television|cellphone phone|smartphone phone
car automobile|bike bicycle|motorbike motorcycle|plane airplane aeroplane|vacation holiday
shop store|buy purchase|start begin|finish complete|fix repair|talk speak chat|reply respond
hurt injure injury|sick ill|doctor physician doc|medicine medication|exercise workout
gift present|prize award|contest competition|hobby pastime|relax unwind destress
happy glad|scared afraid frightened|angry mad|sad unhappy|big large|tiny little small
wedding marriage|marry wed|trip journey|hike trek|sea ocean|couch sofa|garbage trash rubbish
fall autumn|cookie biscuit|candy sweets|apartment flat|neighborhood neighbourhood|neighbor neighbour
favorite favourite|color colour|theater theatre|center centre|organize organise|realize realise
honor honour|humor humour|travel travelling traveling|jewelry jewellery|gray grey|mold mould
practice practise|program programme|catalog catalogue|license licence|defense defence
`

/** Stem -> the stems of the other words of its groups, per stemming mode (irregular forms on or off). */
const tables = new Map<boolean, ReadonlyMap<string, readonly string[]>>()

/** The stems a query term also looks for (not itself), or none. */
export function synonymsOf(term: string, irregular: boolean): readonly string[] {
  let table = tables.get(irregular)
  if (table === undefined) {
    const map = new Map<string, Set<string>>()
    for (const group of GROUPS.trim().split(/[|\n]/)) {
      const stems = [...new Set(group.trim().split(' ').map(word => stemWord(word, irregular)))]
      for (const stem of stems) {
        const others = map.get(stem) ?? new Set<string>()
        for (const other of stems) if (other !== stem) others.add(other)
        map.set(stem, others)
      }
    }
    table = new Map([...map].map(([stem, others]) => [stem, [...others]]))
    tables.set(irregular, table)
  }
  return table.get(term) ?? NONE
}

const NONE: readonly string[] = []
