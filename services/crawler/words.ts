/**
 * Word lists of the sample catalog: the vocabulary generated titles are built from (with
 * translations, so a generated title has a plausible localized form in each translation
 * language), people's names, places and sentence fragments for overviews and taglines.
 */

/** The languages every title gets a MediaTranslationObserved for. */
export const TRANSLATION_LANGUAGES = ['de', 'fr', 'es', 'it', 'ja', 'pt', 'ko', 'nl'] as const;
export type TranslationLanguage = (typeof TRANSLATION_LANGUAGES)[number];

/**
 * Nouns: english | de gender:Noun | fr | es | it | pt (gender:noun) | nl article:noun | ja | ko.
 * Gender m/f/n decides articles and adjective endings.
 */
const NOUN_ROWS = [
  'Harbor|m:Hafen|m:port|m:puerto|m:porto|m:porto|de:haven|港|항구',
  'Line|f:Linie|f:ligne|f:línea|f:linea|f:linha|de:lijn|線|선',
  'River|m:Fluss|f:rivière|m:río|m:fiume|m:rio|de:rivier|川|강',
  'House|n:Haus|f:maison|f:casa|f:casa|f:casa|het:huis|家|집',
  'City|f:Stadt|f:ville|f:ciudad|f:città|f:cidade|de:stad|街|도시',
  'Night|f:Nacht|f:nuit|f:noche|f:notte|f:noite|de:nacht|夜|밤',
  'Road|f:Straße|f:route|m:camino|f:strada|f:estrada|de:weg|道|길',
  'Garden|m:Garten|m:jardin|m:jardín|m:giardino|m:jardim|de:tuin|庭|정원',
  'Kingdom|n:Königreich|m:royaume|m:reino|m:regno|m:reino|het:koninkrijk|王国|왕국',
  'Crown|f:Krone|f:couronne|f:corona|f:corona|f:coroa|de:kroon|王冠|왕관',
  'Storm|m:Sturm|f:tempête|f:tormenta|f:tempesta|f:tempestade|de:storm|嵐|폭풍',
  'Shadow|m:Schatten|f:ombre|f:sombra|f:ombra|f:sombra|de:schaduw|影|그림자',
  'Bridge|f:Brücke|m:pont|m:puente|m:ponte|f:ponte|de:brug|橋|다리',
  'Island|f:Insel|f:île|f:isla|f:isola|f:ilha|het:eiland|島|섬',
  'Valley|n:Tal|f:vallée|m:valle|f:valle|m:vale|de:vallei|谷|계곡',
  'Station|m:Bahnhof|f:gare|f:estación|f:stazione|f:estação|het:station|駅|역',
  'Empire|n:Imperium|m:empire|m:imperio|m:impero|m:império|het:rijk|帝国|제국',
  'Tide|f:Flut|f:marée|f:marea|f:marea|f:maré|het:tij|潮|조류',
  'Light|n:Licht|f:lumière|f:luz|f:luce|f:luz|het:licht|光|빛',
  'Fire|n:Feuer|m:feu|m:fuego|m:fuoco|m:fogo|het:vuur|炎|불',
  'Winter|m:Winter|m:hiver|m:invierno|m:inverno|m:inverno|de:winter|冬|겨울',
  'Summer|m:Sommer|m:été|m:verano|f:estate|m:verão|de:zomer|夏|여름',
  'Secret|n:Geheimnis|m:secret|m:secreto|m:segreto|m:segredo|het:geheim|秘密|비밀',
  'Truth|f:Wahrheit|f:vérité|f:verdad|f:verità|f:verdade|de:waarheid|真実|진실',
  'Game|n:Spiel|m:jeu|m:juego|m:gioco|m:jogo|het:spel|ゲーム|게임',
  'Heart|n:Herz|m:cœur|m:corazón|m:cuore|m:coração|het:hart|心|마음',
  'Mountain|m:Berg|f:montagne|f:montaña|f:montagna|f:montanha|de:berg|山|산',
  'Forest|m:Wald|f:forêt|m:bosque|f:foresta|f:floresta|het:bos|森|숲',
  'Coast|f:Küste|f:côte|f:costa|f:costa|f:costa|de:kust|海岸|해안',
  'Border|f:Grenze|f:frontière|f:frontera|m:confine|f:fronteira|de:grens|国境|국경',
  'Signal|n:Signal|m:signal|f:señal|m:segnale|m:sinal|het:signaal|信号|신호',
  'Witness|m:Zeuge|m:témoin|m:testigo|m:testimone|f:testemunha|de:getuige|証人|목격자',
  'Hour|f:Stunde|f:heure|f:hora|f:ora|f:hora|het:uur|時間|시간',
  'Sky|m:Himmel|m:ciel|m:cielo|m:cielo|m:céu|de:hemel|空|하늘',
  'Sea|n:Meer|f:mer|m:mar|m:mare|m:mar|de:zee|海|바다',
  'Star|m:Stern|f:étoile|f:estrella|f:stella|f:estrela|de:ster|星|별',
  'Wolf|m:Wolf|m:loup|m:lobo|m:lupo|m:lobo|de:wolf|狼|늑대',
  'Hunter|m:Jäger|m:chasseur|m:cazador|m:cacciatore|m:caçador|de:jager|狩人|사냥꾼',
  'Doctor|m:Doktor|m:docteur|m:doctor|m:dottore|m:doutor|de:dokter|医師|의사',
  'Hotel|n:Hotel|m:hôtel|m:hotel|m:hotel|m:hotel|het:hotel|ホテル|호텔',
  'Tower|m:Turm|f:tour|f:torre|f:torre|f:torre|de:toren|塔|탑',
  'Circle|m:Kreis|m:cercle|m:círculo|m:cerchio|m:círculo|de:kring|円|원',
  'Code|m:Code|m:code|m:código|m:codice|m:código|de:code|コード|코드',
  'Dream|m:Traum|m:rêve|m:sueño|m:sogno|m:sonho|de:droom|夢|꿈',
  'Promise|n:Versprechen|f:promesse|f:promesa|f:promessa|f:promessa|de:belofte|約束|약속',
] as const;

/**
 * Adjectives: english | de stem | fr m/f | es m/f | it m/f | pt m/f | nl (inflected) | ja | ko
 * [| pre]. `pre`: Romance languages put it before the noun (`le dernier port`).
 */
const ADJECTIVE_ROWS = [
  'Silent|still|silencieux/silencieuse|silencioso/silenciosa|silenzioso/silenziosa|silencioso/silenciosa|stille|静かな|고요한',
  'Northern|nördlich|du nord/du nord|del norte/del norte|del nord/del nord|do norte/do norte|noordelijke|北の|북쪽의',
  'Last|letzt|dernier/dernière|último/última|ultimo/ultima|último/última|laatste|最後の|마지막|pre',
  'Dark|dunkl|sombre/sombre|oscuro/oscura|oscuro/oscura|escuro/escura|donkere|暗い|어두운',
  'Broken|gebrochen|brisé/brisée|roto/rota|spezzato/spezzata|partido/partida|gebroken|壊れた|부서진',
  'Hidden|verborgen|caché/cachée|oculto/oculta|nascosto/nascosta|oculto/oculta|verborgen|隠された|숨겨진',
  'Golden|golden|doré/dorée|dorado/dorada|dorato/dorata|dourado/dourada|gouden|黄金の|황금빛',
  'Lost|verloren|perdu/perdue|perdido/perdida|perduto/perduta|perdido/perdida|verloren|失われた|잃어버린',
  'Wild|wild|sauvage/sauvage|salvaje/salvaje|selvaggio/selvaggia|selvagem/selvagem|wilde|野生の|야생의',
  'Cold|kalt|froid/froide|frío/fría|freddo/fredda|frio/fria|koude|冷たい|차가운',
  'Red|rot|rouge/rouge|rojo/roja|rosso/rossa|vermelho/vermelha|rode|赤い|붉은',
  'Black|schwarz|noir/noire|negro/negra|nero/nera|negro/negra|zwarte|黒い|검은',
  'White|weiß|blanc/blanche|blanco/blanca|bianco/bianca|branco/branca|witte|白い|하얀',
  'Long|lang|long/longue|largo/larga|lungo/lunga|longo/longa|lange|長い|긴|pre',
  'Distant|fern|lointain/lointaine|lejano/lejana|lontano/lontana|distante/distante|verre|遠い|먼',
  'Burning|brennend|ardent/ardente|ardiente/ardiente|ardente/ardente|ardente/ardente|brandende|燃える|불타는',
  'Frozen|gefroren|gelé/gelée|helado/helada|ghiacciato/ghiacciata|congelado/congelada|bevroren|凍てついた|얼어붙은',
  'Endless|endlos|infini/infinie|infinito/infinita|infinito/infinita|infinito/infinita|eindeloze|果てしない|끝없는',
  'Little|klein|petit/petite|pequeño/pequeña|piccolo/piccola|pequeno/pequena|kleine|小さな|작은|pre',
  'Great|groß|grand/grande|gran/gran|grande/grande|grande/grande|grote|偉大な|위대한|pre',
  'New|neu|nouveau/nouvelle|nuevo/nueva|nuovo/nuova|novo/nova|nieuwe|新しい|새로운|pre',
  'Old|alt|vieux/vieille|viejo/vieja|vecchio/vecchia|velho/velha|oude|古い|오래된|pre',
  'Lonely|einsam|solitaire/solitaire|solitario/solitaria|solitario/solitaria|solitário/solitária|eenzame|孤独な|외로운',
  'Deep|tief|profond/profonde|profundo/profunda|profondo/profonda|profundo/profunda|diepe|深い|깊은',
  'Strange|seltsam|étrange/étrange|extraño/extraña|strano/strana|estranho/estranha|vreemde|奇妙な|이상한',
  'Royal|königlich|royal/royale|real/real|reale/reale|real/real|koninklijke|王家の|왕실의',
  'Bright|hell|brillant/brillante|brillante/brillante|brillante/brillante|brilhante/brilhante|heldere|輝く|빛나는',
  'Second|zweit|second/seconde|segundo/segunda|secondo/seconda|segundo/segunda|tweede|二番目の|두 번째|pre',
  'Silver|silbern|d’argent/d’argent|de plata/de plata|d’argento/d’argento|de prata/de prata|zilveren|銀の|은빛',
] as const;

export type Gender = 'm' | 'f' | 'n';

export interface Noun {
  en: string;
  de: { gender: Gender; word: string };
  fr: { gender: Gender; word: string };
  es: { gender: Gender; word: string };
  it: { gender: Gender; word: string };
  pt: { gender: Gender; word: string };
  nl: { article: string; word: string };
  ja: string;
  ko: string;
}

export interface Adjective {
  en: string;
  deStem: string;
  fr: readonly [string, string];
  es: readonly [string, string];
  it: readonly [string, string];
  pt: readonly [string, string];
  nl: string;
  ja: string;
  ko: string;
  /** Placed before the noun in Romance languages. */
  pre: boolean;
}

function gendered(cell: string): { gender: Gender; word: string } {
  const [g, word] = cell.split(':') as [string, string];
  return { gender: g as Gender, word };
}

function pair(cell: string): readonly [string, string] {
  const [m, f] = cell.split('/') as [string, string];
  return [m, f];
}

export const NOUNS: readonly Noun[] = NOUN_ROWS.map((row) => {
  const [en, de, fr, es, it, pt, nl, ja, ko] = row.split('|') as [string, string, string, string, string, string, string, string, string];
  const [article, word] = nl.split(':') as [string, string];
  return { en, de: gendered(de), fr: gendered(fr), es: gendered(es), it: gendered(it), pt: gendered(pt), nl: { article, word }, ja, ko };
});

export const ADJECTIVES: readonly Adjective[] = ADJECTIVE_ROWS.map((row) => {
  const [en, deStem, fr, es, it, pt, nl, ja, ko, pre] = row.split('|') as [string, string, string, string, string, string, string, string, string, string | undefined];
  return { en, deStem, fr: pair(fr), es: pair(es), it: pair(it), pt: pair(pt), nl, ja, ko, pre: pre === 'pre' };
});

/** Fictional places: proper names stay as they are in every language. */
export const PLACES = [
  'Avalon', 'Kingsbridge', 'Marlow', 'Westbrook', 'Halloway', 'Ravensmoor', 'Port Ellis', 'Saint Clair',
  'Eastwick', 'Blackwater', 'Fairhaven', 'Linden Falls', 'Harrow', 'Norhavn', 'Castelmare', 'Valdoro',
  'Kirkby', 'Oban', 'Tarrant', 'Greyhaven', 'Ashford', 'Silverlake', 'Monte Alto', 'Brightwater',
] as const;

export const FIRST_NAMES = [
  'Anna', 'James', 'Maria', 'David', 'Sofia', 'Michael', 'Emma', 'Daniel', 'Olivia', 'Lucas', 'Chloe', 'Samuel',
  'Isabel', 'Noah', 'Hannah', 'Elias', 'Leila', 'Marcus', 'Nora', 'Tomas', 'Yuki', 'Min-jun', 'Priya', 'Arjun',
  'Camille', 'Mateo', 'Freya', 'Oskar', 'Ines', 'Diego', 'Amara', 'Kwame', 'Zara', 'Rafael', 'Helena', 'Jonas',
  'Clara', 'Victor', 'Alice', 'Hugo', 'Maya', 'Felix', 'Rosa', 'Adrian', 'Lena', 'Omar', 'Sara', 'Leon',
  'Julia', 'Ethan', 'Aiko', 'Seo-yeon', 'Ravi', 'Ana', 'Pablo', 'Ingrid', 'Magnus', 'Eva', 'Nikolai', 'Grace',
] as const;

export const LAST_NAMES = [
  'Carter', 'Novak', 'Lindqvist', 'Moreau', 'Rossi', 'Fischer', 'Okafor', 'Tanaka', 'Kim', 'Sharma', 'Silva',
  'Garcia', 'Walsh', 'Brennan', 'Kowalski', 'Jensen', 'Haddad', 'Mendes', 'Bauer', 'Laurent', 'Costa', 'Meyer',
  'Andersson', 'Park', 'Nakamura', 'Patel', 'Santos', 'Romero', 'Dubois', 'Ricci', 'Hartmann', 'Nilsen', 'Mensah',
  'Ortega', 'Varga', 'Popescu', 'Horvat', 'Petrov', 'Kaplan', 'Cohen', 'Reyes', 'Morgan', 'Hughes', 'Sullivan',
  'Fletcher', 'Whitaker', 'Ellison', 'Blake', 'Harper', 'Quinn', 'Ashby', 'Lowell', 'Sinclair', 'Vance', 'Monroe',
  'Delgado', 'Ferreira', 'Yilmaz', 'Demir', 'Nguyen', 'Tran', 'Suzuki', 'Choi', 'Lee', 'Mahlaba', 'Adeyemi',
  'Kovacs', 'Dimitrov', 'Papadopoulos', 'Berg', 'Holm', 'Virtanen', 'Van Dijk', 'De Vries', 'Janssens', 'Keller',
  'Weber', 'Schmidt', 'Conti', 'Marino',
] as const;

export const GOALS = [
  'save the family business', 'find a missing sister', 'win back an old love', 'stop a conspiracy',
  'finish one last job', 'uncover the truth about a fire', 'clear a father\'s name', 'protect a key witness',
  'keep a promise made years ago', 'bring a fractured crew back together', 'solve a decades-old murder',
  'outrun a past that refuses to stay buried', 'survive a winter cut off from the world',
  'pull off an impossible heist', 'rebuild a life after prison', 'find the author of an anonymous letter',
] as const;

export const TAGLINES = [
  'Some secrets never stay buried.', 'One night. One chance.', 'The truth has a price.', 'Nobody leaves unchanged.',
  'Every family has a story.', 'Trust no one.', 'Home is where the trouble is.', 'The past is never far behind.',
  'Courage is contagious.', 'It all ends here.', 'Love is the hardest case.', 'Run.', 'Nothing is what it seems.',
  'The tide is turning.', 'Be careful what you wish for.', 'Every legend has a beginning.',
] as const;

/** Localized taglines and overview sentences per translation language. */
export const LOCALIZED: Record<TranslationLanguage, {
  taglines: readonly string[];
  /** Placeholders: {title} {year} {lead} {second} {director} {place} {char}. */
  movie: readonly string[];
  show: readonly string[];
  /** Subtitles a distributor adds to an English title. */
  subtitles: readonly string[];
}> = {
  de: {
    taglines: ['Manche Geheimnisse bleiben nicht begraben.', 'Eine Nacht. Eine Chance.', 'Die Wahrheit hat ihren Preis.', 'Traue niemandem.', 'Nichts ist, wie es scheint.'],
    movie: [
      '{char} kehrt nach {place} zurück und muss sich der Vergangenheit stellen. {lead} und {second} in einem Film von {director} ({year}).',
      'In {place} gerät das Leben von {char} aus den Fugen. Mit {lead} und {second}.',
    ],
    show: ['{char} kehrt nach {place} zurück, wo nichts mehr ist, wie es war. Mit {lead} und {second}.', 'Eine Kleinstadt, ein Verbrechen, viele Verdächtige: {lead} ermittelt in {place}.'],
    subtitles: ['Die wahre Geschichte', 'Eine Reise ins Ungewisse', 'Nichts ist, wie es scheint', 'Liebe auf Umwegen', 'Das Abenteuer beginnt', 'Die Abrechnung'],
  },
  fr: {
    taglines: ['Certains secrets ne restent jamais enfouis.', 'Une nuit. Une chance.', 'La vérité a un prix.', 'Ne faites confiance à personne.', 'Rien n’est ce qu’il paraît.'],
    movie: [
      'De retour à {place}, {char} doit affronter son passé. {lead} et {second} dans un film de {director} ({year}).',
      'À {place}, la vie de {char} bascule. Avec {lead} et {second}.',
    ],
    show: ['{char} revient à {place}, où plus rien n’est comme avant. Avec {lead} et {second}.', 'Une petite ville, un crime, de nombreux suspects : {lead} enquête à {place}.'],
    subtitles: ['L’histoire vraie', 'Le voyage', 'Rien n’est ce qu’il paraît', 'Un amour impossible', 'L’aventure commence', 'Le règlement de comptes'],
  },
  es: {
    taglines: ['Algunos secretos nunca quedan enterrados.', 'Una noche. Una oportunidad.', 'La verdad tiene un precio.', 'No confíes en nadie.', 'Nada es lo que parece.'],
    movie: [
      '{char} regresa a {place} y debe enfrentarse a su pasado. {lead} y {second} en una película de {director} ({year}).',
      'En {place}, la vida de {char} da un vuelco. Con {lead} y {second}.',
    ],
    show: ['{char} vuelve a {place}, donde nada es como antes. Con {lead} y {second}.', 'Un pueblo, un crimen, muchos sospechosos: {lead} investiga en {place}.'],
    subtitles: ['La historia real', 'Un viaje inesperado', 'Nada es lo que parece', 'Amor a segunda vista', 'Comienza la aventura', 'El ajuste de cuentas'],
  },
  it: {
    taglines: ['Alcuni segreti non restano sepolti.', 'Una notte. Una possibilità.', 'La verità ha un prezzo.', 'Non fidarti di nessuno.', 'Niente è come sembra.'],
    movie: [
      '{char} torna a {place} e deve fare i conti con il passato. {lead} e {second} in un film di {director} ({year}).',
      'A {place} la vita di {char} viene stravolta. Con {lead} e {second}.',
    ],
    show: ['{char} torna a {place}, dove nulla è più come prima. Con {lead} e {second}.', 'Una piccola città, un delitto, molti sospettati: {lead} indaga a {place}.'],
    subtitles: ['La vera storia', 'Un viaggio inaspettato', 'Niente è come sembra', 'Un amore difficile', 'L’avventura ha inizio', 'La resa dei conti'],
  },
  pt: {
    taglines: ['Alguns segredos nunca ficam enterrados.', 'Uma noite. Uma chance.', 'A verdade tem um preço.', 'Não confie em ninguém.', 'Nada é o que parece.'],
    movie: [
      '{char} volta a {place} e precisa enfrentar o passado. {lead} e {second} em um filme de {director} ({year}).',
      'Em {place}, a vida de {char} vira de cabeça para baixo. Com {lead} e {second}.',
    ],
    show: ['{char} volta a {place}, onde nada é como antes. Com {lead} e {second}.', 'Uma cidade pequena, um crime, muitos suspeitos: {lead} investiga em {place}.'],
    subtitles: ['A história real', 'Uma viagem inesperada', 'Nada é o que parece', 'Um amor improvável', 'A aventura começa', 'O acerto de contas'],
  },
  nl: {
    taglines: ['Sommige geheimen blijven niet begraven.', 'Eén nacht. Eén kans.', 'De waarheid heeft een prijs.', 'Vertrouw niemand.', 'Niets is wat het lijkt.'],
    movie: [
      '{char} keert terug naar {place} en moet het verleden onder ogen zien. {lead} en {second} in een film van {director} ({year}).',
      'In {place} wordt het leven van {char} op zijn kop gezet. Met {lead} en {second}.',
    ],
    show: ['{char} keert terug naar {place}, waar niets meer is zoals het was. Met {lead} en {second}.', 'Een klein dorp, een misdaad, veel verdachten: {lead} onderzoekt de zaak in {place}.'],
    subtitles: ['Het ware verhaal', 'Een onverwachte reis', 'Niets is wat het lijkt', 'Liefde op het tweede gezicht', 'Het avontuur begint', 'De afrekening'],
  },
  ja: {
    taglines: ['秘密は決して埋もれたままではいない。', '一夜。一度きりのチャンス。', '真実には代償がある。', '誰も信じるな。'],
    movie: ['{place}に戻った{char}は、過去と向き合うことになる。{director}監督作品（{year}年）。出演：{lead}、{second}。', '{place}で{char}の人生が一変する。出演：{lead}、{second}。'],
    show: ['{char}は何もかもが変わってしまった{place}に戻ってくる。出演：{lead}、{second}。', '小さな町、ひとつの事件、大勢の容疑者。{lead}が{place}で捜査に挑む。'],
    subtitles: ['真実の物語', '旅の始まり', '運命の夜'],
  },
  ko: {
    taglines: ['어떤 비밀은 결코 묻히지 않는다.', '단 하룻밤. 단 한 번의 기회.', '진실에는 대가가 따른다.', '아무도 믿지 마라.'],
    movie: ['{place}(으)로 돌아온 {char}은(는) 과거와 마주해야 한다. {director} 감독 작품({year}). 출연: {lead}, {second}.', '{place}에서 {char}의 삶이 송두리째 흔들린다. 출연: {lead}, {second}.'],
    show: ['{char}은(는) 모든 것이 변해 버린 {place}(으)로 돌아온다. 출연: {lead}, {second}.', '작은 마을, 하나의 사건, 수많은 용의자. {lead}이(가) {place}에서 수사에 나선다.'],
    subtitles: ['실화', '여정의 시작', '운명의 밤'],
  },
};

export const EPISODE_WORDS = [
  'Pilot', 'Homecoming', 'The Visitor', 'Crossroads', 'Low Tide', 'Aftermath', 'The Long Night', 'Reckoning',
  'First Light', 'Old Friends', 'The Letter', 'Fault Lines', 'Blood Ties', 'The Storm', 'Thin Ice', 'Open Water',
  'Ghosts', 'The Offer', 'Undertow', 'Last Call', 'Safe Harbor', 'The Key', 'Brave New World', 'Endgame',
] as const;
