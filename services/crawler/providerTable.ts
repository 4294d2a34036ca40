/**
 * The streaming providers of the sample catalog: real services with the countries they serve
 * (approximately; the sample needs realistic shape, not a market survey), the kind of offer they
 * make, and how their title URLs look. services/crawler/providers.ts turns this table into the
 * per-country provider lists.
 */

export type ProviderKind =
  /** subscription: `flatrate` offers */
  | 'svod'
  /** free with ads */
  | 'avod'
  /** free ad-supported linear channels */
  | 'fast'
  /** free without ads (public broadcasters, libraries) */
  | 'free'
  /** rent / buy stores */
  | 'tvod'
  /** an add-on channel sold through a parent provider */
  | 'channel';

export type UrlStyle = 'netflix' | 'prime' | 'disney' | 'max' | 'hulu' | 'apple' | 'youtube' | 'gplay' | 'path' | 'query';

export interface ProviderDef {
  id: string;
  name: string;
  /** Three-letter code used by the search `provider` filter; generated when absent. */
  shortId?: string;
  kind: ProviderKind;
  /** Global popularity, 0.5..100. */
  weight: number;
  /** Country codes and `@region` names; `*` for everywhere. */
  where: readonly string[];
  domain: string;
  url: UrlStyle;
}

const P = (
  id: string, name: string, kind: ProviderKind, weight: number, where: readonly string[], domain: string,
  url: UrlStyle = 'path', shortId?: string,
): ProviderDef => (shortId === undefined ? { id, name, kind, weight, where, domain, url } : { id, name, kind, weight, where, domain, url, shortId });

const EU = ['@uk', '@dach', '@eu_west', '@eu_south', '@nordic', '@eu_east'];
const AMERICAS = ['@na', '@latam'];

export const MAJOR_PROVIDERS: readonly ProviderDef[] = [
  P('netflix', 'Netflix', 'svod', 100, ['*'], 'www.netflix.com', 'netflix', 'nfx'),
  P('amazon-prime-video', 'Amazon Prime Video', 'svod', 95, ['*'], 'www.primevideo.com', 'prime', 'amp'),
  P('disney-plus', 'Disney Plus', 'svod', 90, ['*', '!NG', '!EG', '!UA', '!VN', '!LT'], 'www.disneyplus.com', 'disney', 'dnp'),
  P('max', 'Max', 'svod', 80, ['US', '@latam', '@nordic', 'ES', 'PT', 'NL', 'BE', 'FR', 'PL', 'CZ', 'SK', 'HU', 'RO', 'BG', 'HR', 'SI', 'RS', 'AU', 'TR', 'ID', 'TH', 'PH'], 'play.max.com', 'max', 'mxx'),
  P('hulu', 'Hulu', 'svod', 85, ['US'], 'www.hulu.com', 'hulu', 'hlu'),
  P('apple-tv-plus', 'Apple TV+', 'svod', 70, ['*'], 'tv.apple.com', 'apple', 'atp'),
  P('paramount-plus', 'Paramount Plus', 'svod', 65, ['US', 'CA', 'AU', 'GB', 'IE', 'IT', 'FR', 'DE', 'AT', 'CH', 'KR', '@latam', '@nordic'], 'www.paramountplus.com', 'path', 'pmp'),
  P('peacock', 'Peacock', 'svod', 60, ['US'], 'www.peacocktv.com', 'path', 'pct'),
  P('crunchyroll', 'Crunchyroll', 'svod', 40, ['*'], 'www.crunchyroll.com', 'path', 'cru'),
  P('mubi', 'MUBI', 'svod', 30, ['*', '!NG', '!EG', '!SA'], 'mubi.com', 'path', 'mbi'),
  P('tubi', 'Tubi', 'avod', 45, ['US', 'CA', 'AU', 'NZ', 'GB', 'IE', '@latam'], 'tubitv.com', 'path', 'tbv'),
  P('pluto-tv', 'Pluto TV', 'fast', 35, ['US', 'CA', 'GB', 'DE', 'AT', 'CH', 'FR', 'ES', 'IT', 'BR', 'MX', 'AR', 'CO', 'CL', 'DK', 'NO', 'SE'], 'pluto.tv', 'path', 'ptv'),
  P('youtube', 'YouTube', 'tvod', 50, ['*'], 'www.youtube.com', 'youtube', 'yot'),
  P('google-play-movies', 'Google Play Movies', 'tvod', 55, ['*', '!EG', '!NG'], 'play.google.com', 'gplay', 'ply'),
  P('apple-tv', 'Apple TV', 'tvod', 60, ['*'], 'tv.apple.com', 'apple', 'itu'),
  P('amazon-video', 'Amazon Video', 'tvod', 58, ['US', 'GB', 'DE', 'AT', 'JP', 'IE', 'CA'], 'www.amazon.com', 'path', 'amz'),
  P('rakuten-tv', 'Rakuten TV', 'tvod', 25, [...EU, '!@uk'], 'www.rakuten.tv', 'path', 'rkt'),
  P('microsoft-store', 'Microsoft Store', 'tvod', 20, ['@na', '@uk', '@dach', '@eu_west', '@eu_south', '@nordic', 'AU', 'NZ', 'JP', 'BR', 'MX'], 'www.microsoft.com', 'path', 'msf'),
  P('plex', 'Plex', 'avod', 22, ['@na', '@uk', '@oceania', '@dach', '@eu_west', '@nordic', '@latam'], 'watch.plex.tv', 'path', 'plx'),
  P('the-roku-channel', 'The Roku Channel', 'avod', 28, ['US', 'CA', 'GB', 'MX'], 'therokuchannel.roku.com', 'path', 'rkc'),
  P('fandango-at-home', 'Fandango at Home', 'tvod', 40, ['US'], 'athome.fandango.com', 'path', 'vdu'),
  P('kanopy', 'Kanopy', 'free', 15, ['US', 'CA', 'AU', 'NZ', 'GB'], 'www.kanopy.com', 'path', 'knp'),
  P('hoopla', 'Hoopla', 'free', 12, ['US', 'CA'], 'www.hoopladigital.com', 'path', 'hop'),
  P('shudder', 'Shudder', 'svod', 18, ['US', 'CA', 'GB', 'IE', 'AU', 'NZ', 'DE'], 'www.shudder.com', 'path', 'shu'),
  P('britbox', 'BritBox', 'svod', 16, ['US', 'CA', 'AU', 'ZA', '@nordic'], 'www.britbox.com', 'path', 'bbx'),
  P('acorn-tv', 'Acorn TV', 'svod', 14, ['US', 'CA', 'AU', 'NZ', 'GB', 'IE'], 'acorn.tv', 'path', 'act'),
  P('curiosity-stream', 'Curiosity Stream', 'svod', 10, ['*'], 'curiositystream.com', 'path', 'cts'),
  P('starz', 'Starz', 'svod', 30, ['US'], 'www.starz.com', 'path', 'stz'),
  P('mgm-plus', 'MGM Plus', 'svod', 25, ['US'], 'www.mgmplus.com', 'path', 'mgp'),
  P('amc-plus', 'AMC Plus', 'svod', 20, ['US', 'CA'], 'www.amcplus.com', 'path', 'amc'),
  P('fubo-tv', 'fuboTV', 'svod', 25, ['US', 'CA'], 'www.fubo.tv', 'path', 'fbo'),
  P('sling-tv', 'Sling TV', 'svod', 22, ['US'], 'watch.sling.com', 'path', 'slg'),
  P('philo', 'Philo', 'svod', 15, ['US'], 'www.philo.com', 'path', 'phl'),
  P('criterion-channel', 'The Criterion Channel', 'svod', 12, ['US', 'CA'], 'www.criterionchannel.com', 'path', 'crc'),
  P('discovery-plus', 'discovery+', 'svod', 30, ['US', 'GB', 'IE', 'IT', 'DE', 'AT', '@nordic', 'IN'], 'www.discoveryplus.com', 'path', 'dsp'),
  P('viki', 'Rakuten Viki', 'avod', 12, ['*'], 'www.viki.com', 'path', 'vik'),
  P('hidive', 'HIDIVE', 'svod', 10, ['@na', '@uk', '@oceania', '@latam', 'DE', 'FR', 'ES', 'IT'], 'www.hidive.com', 'path', 'hdv'),
  P('crackle', 'Crackle', 'avod', 10, ['US'], 'www.crackle.com', 'path', 'crk'),
  P('xumo-play', 'Xumo Play', 'fast', 8, ['US'], 'play.xumo.com', 'path', 'xum'),
  P('sundance-now', 'Sundance Now', 'svod', 8, ['US', 'CA'], 'www.sundancenow.com', 'path', 'sdn'),
  P('bet-plus', 'BET+', 'svod', 9, ['US'], 'www.bet.plus', 'path', 'btp'),
  P('hallmark-movies-now', 'Hallmark Movies Now', 'svod', 9, ['US'], 'www.hallmarkmoviesnow.com', 'path', 'hmn'),
  P('iqiyi', 'iQIYI', 'avod', 18, ['ID', 'TH', 'PH', 'VN', 'KR'], 'www.iq.com', 'query', 'iqi'),
  P('wetv', 'WeTV', 'avod', 14, ['ID', 'TH', 'PH', 'VN'], 'wetv.vip', 'path', 'wtv'),
  P('viu', 'Viu', 'avod', 20, ['ID', 'TH', 'PH', 'AE', 'SA', 'EG', 'ZA'], 'www.viu.com', 'path', 'viu'),
  P('starzplay', 'STARZPLAY', 'svod', 18, ['AE', 'SA', 'EG', 'TR'], 'starzplay.com', 'path', 'szp'),
  P('skyshowtime', 'SkyShowtime', 'svod', 35, ['ES', 'PT', 'NL', '@nordic', 'PL', 'CZ', 'SK', 'HU', 'RO', 'BG', 'HR', 'SI', 'RS'], 'www.skyshowtime.com', 'path', 'sst'),
  P('filmin', 'Filmin', 'svod', 15, ['ES', 'PT', 'MX'], 'www.filmin.es', 'path', 'fmn'),
  P('vix', 'ViX', 'avod', 24, ['US', 'MX', 'AR', 'CO', 'CL'], 'vix.com', 'path', 'vix'),
  P('claro-video', 'Claro video', 'svod', 22, ['@latam'], 'www.clarovideo.com', 'query', 'clv'),
  P('filmbox-plus', 'FilmBox+', 'svod', 6, ['@eu_east', 'GR', 'TR'], 'www.filmboxplus.com', 'path', 'fbx'),
];

/** Public broadcasters and national services. */
export const REGIONAL_PROVIDERS: readonly ProviderDef[] = [
  // United Kingdom and Ireland
  P('bbc-iplayer', 'BBC iPlayer', 'free', 55, ['GB'], 'www.bbc.co.uk', 'path', 'bbc'),
  P('itvx', 'ITVX', 'avod', 40, ['GB'], 'www.itv.com', 'path', 'itv'),
  P('channel-4', 'Channel 4', 'avod', 35, ['GB'], 'www.channel4.com', 'path', 'ch4'),
  P('my5', 'My5', 'avod', 20, ['GB'], 'www.channel5.com', 'path', 'my5'),
  P('uktv-play', 'U', 'avod', 15, ['GB'], 'u.co.uk', 'path', 'ukt'),
  P('sky-go', 'Sky Go', 'svod', 45, ['GB', 'IE', 'DE', 'AT', 'IT'], 'www.sky.com', 'path', 'skg'),
  P('now-tv', 'NOW', 'svod', 42, ['GB', 'IE', 'IT'], 'www.nowtv.com', 'path', 'now'),
  P('sky-store', 'Sky Store', 'tvod', 25, ['GB', 'IE'], 'www.skystore.com', 'path', 'sks'),
  P('rte-player', 'RTÉ Player', 'free', 25, ['IE'], 'www.rte.ie', 'path', 'rte'),
  P('virgin-media-play', 'Virgin Media Play', 'avod', 15, ['IE'], 'www.virginmediatelevision.ie', 'path', 'vmp'),
  // DACH
  P('rtl-plus', 'RTL+', 'svod', 40, ['DE', 'AT', 'HU'], 'plus.rtl.de', 'path', 'rtl'),
  P('joyn', 'Joyn', 'avod', 35, ['DE', 'AT', 'CH'], 'www.joyn.de', 'path', 'joy'),
  P('zdf', 'ZDF', 'free', 30, ['DE'], 'www.zdf.de', 'path', 'zdf'),
  P('ard-mediathek', 'ARD Mediathek', 'free', 30, ['DE'], 'www.ardmediathek.de', 'path', 'ard'),
  P('arte', 'ARTE', 'free', 18, ['DE', 'AT', 'CH', 'FR', 'BE'], 'www.arte.tv', 'path', 'art'),
  P('magenta-tv', 'MagentaTV', 'svod', 25, ['DE', 'AT'], 'www.magenta.tv', 'path', 'mgt'),
  P('wow', 'WOW', 'svod', 30, ['DE', 'AT'], 'www.wowtv.de', 'path', 'wow'),
  P('orf-on', 'ORF ON', 'free', 20, ['AT'], 'on.orf.at', 'path', 'orf'),
  P('flimmit', 'Flimmit', 'svod', 6, ['AT', 'DE'], 'www.flimmit.at', 'path', 'flm'),
  P('play-suisse', 'Play Suisse', 'free', 18, ['CH'], 'www.playsuisse.ch', 'path', 'pss'),
  P('blue-tv', 'blue TV', 'svod', 15, ['CH'], 'www.blue.ch', 'path', 'blu'),
  P('videociety', 'Videociety', 'tvod', 5, ['DE', 'AT'], 'www.videociety.de', 'path', 'vcy'),
  // France and Benelux
  P('canal-plus', 'Canal+', 'svod', 50, ['FR', 'PL', 'CH', 'BE'], 'www.canalplus.com', 'path', 'cpd'),
  P('france-tv', 'france.tv', 'free', 35, ['FR'], 'www.france.tv', 'path', 'ftv'),
  P('tf1-plus', 'TF1+', 'avod', 30, ['FR', 'BE'], 'www.tf1.fr', 'path', 'tf1'),
  P('m6-plus', 'M6+', 'avod', 25, ['FR'], 'www.m6.fr', 'path', 'm6p'),
  P('molotov', 'Molotov', 'fast', 10, ['FR'], 'www.molotov.tv', 'path', 'mlt'),
  P('universcine', 'UniversCiné', 'tvod', 6, ['FR', 'BE'], 'www.universcine.com', 'path', 'unc'),
  P('filmo', 'Filmo', 'svod', 5, ['FR'], 'www.filmo.tv', 'path', 'flo'),
  P('videoland', 'Videoland', 'svod', 40, ['NL'], 'v2.videoland.com', 'path', 'vil'),
  P('npo-start', 'NPO Start', 'free', 30, ['NL'], 'npo.nl', 'path', 'npo'),
  P('pathe-thuis', 'Pathé Thuis', 'tvod', 18, ['NL'], 'www.pathe-thuis.nl', 'path', 'pth'),
  P('kijk', 'KIJK', 'avod', 12, ['NL'], 'www.kijk.nl', 'path', 'kij'),
  P('vrt-max', 'VRT MAX', 'free', 30, ['BE'], 'www.vrt.be', 'path', 'vrt'),
  P('goplay', 'GoPlay', 'avod', 18, ['BE'], 'www.goplay.be', 'path', 'gop'),
  P('streamz', 'Streamz', 'svod', 28, ['BE'], 'www.streamz.be', 'path', 'stm'),
  P('auvio', 'Auvio', 'free', 15, ['BE'], 'auvio.rtbf.be', 'path', 'auv'),
  // Spain, Portugal, Italy, Greece
  P('movistar-plus', 'Movistar Plus+', 'svod', 45, ['ES'], 'ver.movistarplus.es', 'path', 'mvs'),
  P('atresplayer', 'Atresplayer', 'avod', 28, ['ES'], 'www.atresplayer.com', 'path', 'atr'),
  P('rtve-play', 'RTVE Play', 'free', 25, ['ES'], 'www.rtve.es', 'path', 'rtv'),
  P('flixole', 'Flixolé', 'svod', 6, ['ES'], 'flixole.com', 'path', 'flx'),
  P('rtp-play', 'RTP Play', 'free', 22, ['PT'], 'www.rtp.pt', 'path', 'rtp'),
  P('opto', 'OPTO SIC', 'svod', 15, ['PT'], 'opto.sic.pt', 'path', 'opt'),
  P('raiplay', 'RaiPlay', 'free', 35, ['IT'], 'www.raiplay.it', 'path', 'rai'),
  P('mediaset-infinity', 'Mediaset Infinity', 'avod', 30, ['IT'], 'mediasetinfinity.mediaset.it', 'path', 'msi'),
  P('timvision', 'TIMvision', 'svod', 22, ['IT'], 'www.timvision.it', 'path', 'tim'),
  P('chili', 'Chili', 'tvod', 15, ['IT', 'PL'], 'it.chili.com', 'path', 'chi'),
  P('ertflix', 'ERTFLIX', 'free', 20, ['GR'], 'www.ertflix.gr', 'path', 'ert'),
  P('cosmote-tv', 'Cosmote TV', 'svod', 25, ['GR'], 'www.cosmotetv.gr', 'path', 'cos'),
  // Nordics
  P('viaplay', 'Viaplay', 'svod', 45, ['@nordic', 'PL', 'LT', 'NL'], 'viaplay.com', 'path', 'vip'),
  P('svt-play', 'SVT Play', 'free', 40, ['SE'], 'www.svtplay.se', 'path', 'svt'),
  P('tv4-play', 'TV4 Play', 'avod', 30, ['SE'], 'www.tv4play.se', 'path', 'tv4'),
  P('nrk-tv', 'NRK TV', 'free', 40, ['NO'], 'tv.nrk.no', 'path', 'nrk'),
  P('tv2-play', 'TV 2 Play', 'svod', 35, ['NO', 'DK'], 'play.tv2.no', 'path', 'tv2'),
  P('dr-tv', 'DR TV', 'free', 40, ['DK'], 'www.dr.dk', 'path', 'drt'),
  P('yle-areena', 'Yle Areena', 'free', 40, ['FI'], 'areena.yle.fi', 'path', 'yle'),
  P('ruutu', 'Ruutu', 'avod', 25, ['FI'], 'www.ruutu.fi', 'path', 'ruu'),
  P('sf-anytime', 'SF Anytime', 'tvod', 20, ['@nordic'], 'www.sfanytime.com', 'path', 'sfa'),
  P('blockbuster-dk', 'Blockbuster', 'tvod', 15, ['DK'], 'www.blockbuster.dk', 'path', 'bbk'),
  // Central and Eastern Europe
  P('player-pl', 'Player', 'svod', 35, ['PL'], 'player.pl', 'path', 'plr'),
  P('polsat-box-go', 'Polsat Box Go', 'svod', 30, ['PL'], 'polsatboxgo.pl', 'path', 'pbg'),
  P('tvp-vod', 'TVP VOD', 'free', 25, ['PL'], 'vod.tvp.pl', 'path', 'tvp'),
  P('cda-premium', 'CDA Premium', 'svod', 10, ['PL'], 'www.cda.pl', 'path', 'cda'),
  P('voyo', 'Voyo', 'svod', 30, ['CZ', 'SK', 'RO', 'BG', 'SI'], 'voyo.nova.cz', 'path', 'voy'),
  P('oneplay', 'Oneplay', 'svod', 28, ['CZ', 'SK'], 'www.oneplay.cz', 'path', 'onp'),
  P('ivysilani', 'iVysílání', 'free', 20, ['CZ'], 'www.ceskatelevize.cz', 'path', 'ivy'),
  P('rtl-plus-hu', 'RTL+ Hungary', 'svod', 25, ['HU'], 'rtlplusz.hu', 'path', 'rth'),
  P('mediaklikk', 'MédiaKlikk', 'free', 15, ['HU'], 'mediaklikk.hu', 'path', 'mkk'),
  P('antena-play', 'AntenaPLAY', 'svod', 22, ['RO'], 'antenaplay.ro', 'path', 'ant'),
  P('pickbox-now', 'Pickbox NOW', 'svod', 20, ['HR', 'SI', 'RS'], 'www.pickboxnow.com', 'path', 'pbn'),
  P('hrti', 'HRTi', 'free', 15, ['HR'], 'hrti.hrt.hr', 'path', 'hrt'),
  P('rtvslo', 'RTV 365', 'free', 12, ['SI'], '365.rtvslo.si', 'path', 'rts'),
  P('arena-cloud', 'Arena Cloud', 'svod', 14, ['RS'], 'arenacloud.rs', 'path', 'arc'),
  P('megogo', 'MEGOGO', 'svod', 30, ['UA', 'LT'], 'megogo.net', 'path', 'mgg'),
  P('sweet-tv', 'SWEET.TV', 'svod', 20, ['UA'], 'sweet.tv', 'path', 'swt'),
  P('kyivstar-tv', 'Kyivstar TV', 'svod', 15, ['UA'], 'tv.kyivstar.ua', 'path', 'kyv'),
  P('go3', 'Go3', 'svod', 25, ['LT'], 'www.go3.lt', 'path', 'go3'),
  P('lrt', 'LRT Mediateka', 'free', 15, ['LT'], 'www.lrt.lt', 'path', 'lrt'),
  // Middle East and Turkey
  P('shahid', 'Shahid', 'svod', 40, ['AE', 'SA', 'EG'], 'shahid.mbc.net', 'path', 'sha'),
  P('osn-plus', 'OSN+', 'svod', 30, ['AE', 'SA', 'EG'], 'osnplus.com', 'path', 'osn'),
  P('tod', 'TOD', 'svod', 20, ['AE', 'SA', 'EG', 'TR'], 'www.tod.tv', 'path', 'tod'),
  P('watch-it', 'WATCH iT', 'svod', 18, ['EG'], 'www.watchit.com', 'path', 'wit'),
  P('exxen', 'Exxen', 'svod', 25, ['TR'], 'www.exxen.com', 'path', 'exx'),
  P('gain', 'Gain', 'svod', 15, ['TR'], 'www.gain.tv', 'path', 'gai'),
  P('tabii', 'tabii', 'free', 18, ['TR'], 'www.tabii.com', 'path', 'tab'),
  P('yes-vod', 'yes VOD', 'svod', 25, ['IL'], 'www.yes.co.il', 'path', 'yes'),
  P('hot-vod', 'HOT VOD', 'svod', 22, ['IL'], 'www.hot.net.il', 'path', 'hot'),
  P('kan-box', 'Kan Box', 'free', 12, ['IL'], 'www.kan.org.il', 'path', 'kan'),
  // Africa
  P('showmax', 'Showmax', 'svod', 40, ['ZA', 'NG'], 'www.showmax.com', 'path', 'smx'),
  P('dstv', 'DStv', 'svod', 30, ['ZA', 'NG'], 'now.dstv.com', 'path', 'dst'),
  P('sabc-plus', 'SABC+', 'free', 12, ['ZA'], 'www.sabcplus.com', 'path', 'sab'),
  P('irokotv', 'IROKOtv', 'svod', 10, ['NG'], 'irokotv.com', 'path', 'iro'),
  // Asia
  P('jiohotstar', 'JioHotstar', 'svod', 60, ['IN'], 'www.hotstar.com', 'path', 'hst'),
  P('zee5', 'ZEE5', 'svod', 35, ['IN', 'AE', 'ID'], 'www.zee5.com', 'path', 'zee'),
  P('sonyliv', 'SonyLIV', 'svod', 30, ['IN'], 'www.sonyliv.com', 'path', 'snl'),
  P('mx-player', 'MX Player', 'avod', 25, ['IN'], 'www.mxplayer.in', 'path', 'mxp'),
  P('aha', 'aha', 'svod', 12, ['IN'], 'www.aha.video', 'path', 'aha'),
  P('sun-nxt', 'Sun NXT', 'svod', 12, ['IN'], 'www.sunnxt.com', 'path', 'sun'),
  P('hoichoi', 'hoichoi', 'svod', 8, ['IN'], 'www.hoichoi.tv', 'path', 'hoi'),
  P('eros-now', 'Eros Now', 'svod', 8, ['IN', 'AE'], 'erosnow.com', 'path', 'ern'),
  P('u-next', 'U-Next', 'svod', 45, ['JP'], 'video.unext.jp', 'query', 'unx'),
  P('hulu-japan', 'Hulu Japan', 'svod', 35, ['JP'], 'www.hulu.jp', 'path', 'hlj'),
  P('abema', 'ABEMA', 'avod', 30, ['JP'], 'abema.tv', 'path', 'abm'),
  P('d-anime-store', 'd Anime Store', 'svod', 18, ['JP'], 'animestore.docomo.ne.jp', 'query', 'dan'),
  P('fod', 'FOD', 'svod', 20, ['JP'], 'fod.fujitv.co.jp', 'path', 'fod'),
  P('telasa', 'TELASA', 'svod', 15, ['JP'], 'www.telasa.jp', 'path', 'tel'),
  P('dmm-tv', 'DMM TV', 'svod', 18, ['JP'], 'tv.dmm.com', 'query', 'dmm'),
  P('wavve', 'Wavve', 'svod', 35, ['KR'], 'www.wavve.com', 'query', 'wav'),
  P('tving', 'TVING', 'svod', 35, ['KR'], 'www.tving.com', 'path', 'tvn'),
  P('coupang-play', 'Coupang Play', 'svod', 30, ['KR'], 'www.coupangplay.com', 'path', 'cpp'),
  P('watcha', 'Watcha', 'svod', 20, ['KR'], 'watcha.com', 'path', 'wat'),
  P('vidio', 'Vidio', 'svod', 30, ['ID'], 'www.vidio.com', 'path', 'vid'),
  P('trueid', 'TrueID', 'avod', 25, ['TH'], 'www.trueid.net', 'path', 'tru'),
  P('ais-play', 'AIS PLAY', 'svod', 15, ['TH'], 'aisplay.ais.co.th', 'path', 'ais'),
  P('iwanttfc', 'iWantTFC', 'svod', 25, ['PH'], 'www.iwanttfc.com', 'path', 'iwt'),
  P('vivamax', 'Vivamax', 'svod', 15, ['PH'], 'www.vivamax.net', 'path', 'vvx'),
  P('fpt-play', 'FPT Play', 'svod', 25, ['VN'], 'fptplay.vn', 'path', 'fpt'),
  P('vieon', 'VieON', 'avod', 22, ['VN'], 'vieon.vn', 'path', 'vie'),
  P('galaxy-play', 'Galaxy Play', 'svod', 15, ['VN'], 'galaxyplay.vn', 'path', 'gxp'),
  // Americas and Oceania
  P('globoplay', 'Globoplay', 'svod', 45, ['BR'], 'globoplay.globo.com', 'path', 'glb'),
  P('looke', 'Looke', 'tvod', 10, ['BR'], 'www.looke.com.br', 'path', 'lok'),
  P('cinepolis-klic', 'Cinépolis KLIC', 'tvod', 12, ['MX', 'CO', 'CL'], 'klic.cinepolis.com', 'path', 'cpk'),
  P('flow', 'Flow', 'svod', 18, ['AR'], 'web.app.flow.com.ar', 'path', 'flw'),
  P('crave', 'Crave', 'svod', 45, ['CA'], 'www.crave.ca', 'path', 'crv'),
  P('cbc-gem', 'CBC Gem', 'free', 30, ['CA'], 'gem.cbc.ca', 'path', 'cbc'),
  P('tou-tv', 'ICI TOU.TV', 'free', 15, ['CA'], 'ici.tou.tv', 'path', 'tou'),
  P('stan', 'Stan', 'svod', 45, ['AU'], 'www.stan.com.au', 'path', 'stn'),
  P('binge', 'Binge', 'svod', 40, ['AU'], 'binge.com.au', 'path', 'bng'),
  P('foxtel-now', 'Foxtel Now', 'svod', 25, ['AU'], 'www.foxtel.com.au', 'path', 'fxt'),
  P('abc-iview', 'ABC iview', 'free', 30, ['AU'], 'iview.abc.net.au', 'path', 'abc'),
  P('sbs-on-demand', 'SBS On Demand', 'free', 28, ['AU'], 'www.sbs.com.au', 'path', 'sbs'),
  P('7plus', '7plus', 'avod', 22, ['AU'], '7plus.com.au', 'path', 'svn'),
  P('9now', '9Now', 'avod', 22, ['AU'], 'www.9now.com.au', 'path', 'nin'),
  P('10-play', '10 Play', 'avod', 18, ['AU'], '10play.com.au', 'path', 'ten'),
  P('tvnz-plus', 'TVNZ+', 'free', 30, ['NZ'], 'www.tvnz.co.nz', 'path', 'tvz'),
  P('neon', 'Neon', 'svod', 30, ['NZ'], 'www.neontv.co.nz', 'path', 'neo'),
  P('threenow', 'ThreeNow', 'avod', 18, ['NZ'], 'www.threenow.co.nz', 'path', 'thn'),
];

/**
 * Small services, most of them sold in many countries; each one is offered in a country with a
 * probability that grows with the market (providers.ts), which pads the lists of small markets to
 * the 50+ providers a real country has.
 */
export const NICHE_PROVIDERS: readonly ProviderDef[] = [
  P('cineverse', 'Cineverse', 'svod', 4, [...AMERICAS, '@uk', '@oceania'], 'www.cineverse.com'),
  P('filmzie', 'Filmzie', 'avod', 2, ['*'], 'filmzie.com'),
  P('docsville', 'Docsville', 'svod', 1.5, ['*'], 'www.docsville.com'),
  P('klassiki', 'Klassiki', 'svod', 1, ['*'], 'klassiki.online'),
  P('dekkoo', 'Dekkoo', 'svod', 1.2, ['*'], 'www.dekkoo.com'),
  P('screambox', 'Screambox', 'svod', 2.5, ['@na', '@uk', '@oceania'], 'www.screambox.com'),
  P('arrow-player', 'Arrow', 'svod', 2.2, ['@na', '@uk', '@oceania', '@nordic', 'NL', 'BE'], 'www.arrow-player.com'),
  P('true-story', 'True Story', 'svod', 1.4, ['*'], 'www.truestory.film'),
  P('magellan-tv', 'MagellanTV', 'svod', 1.8, ['*'], 'www.magellantv.com'),
  P('broadwayhd', 'BroadwayHD', 'svod', 1.3, ['*'], 'www.broadwayhd.com'),
  P('gaia', 'Gaia', 'svod', 1.6, ['*'], 'www.gaia.com'),
  P('outtv', 'OUTtv', 'svod', 1.2, ['@na', ...EU], 'www.outtvgo.com'),
  P('hi-yah', 'Hi-YAH!', 'svod', 1, ['*'], 'www.hiyahtv.com'),
  P('film-movement-plus', 'Film Movement Plus', 'svod', 1.1, ['@na'], 'www.filmmovementplus.com'),
  P('shout-tv', 'Shout! TV', 'avod', 1.5, ['@na'], 'www.shoutfactorytv.com'),
  P('midnight-pulp', 'Midnight Pulp', 'fast', 1, ['*'], 'www.midnightpulp.com'),
  P('popcornflix', 'Popcornflix', 'avod', 2, ['@na', '@uk'], 'www.popcornflix.com'),
  P('cinessance', 'Cinessance', 'svod', 0.8, ['*'], 'www.cinessance.com'),
  P('filmdoo', 'FilmDoo', 'tvod', 0.9, ['*'], 'www.filmdoo.com'),
  P('takflix', 'Takflix', 'tvod', 0.7, ['*'], 'takflix.com'),
  P('dafilms', 'DAFilms', 'svod', 0.8, ['*'], 'dafilms.com'),
  P('kino-now', 'Kino Now', 'tvod', 1, ['*'], 'www.kinonow.com'),
  P('eventive', 'Eventive', 'tvod', 0.6, ['*'], 'watch.eventive.org'),
  P('vimeo-on-demand', 'Vimeo On Demand', 'tvod', 3, ['*'], 'vimeo.com'),
  P('indieflix', 'IndieFlix', 'svod', 0.9, ['*'], 'indieflix.com'),
  P('guidedoc', 'Guidedoc', 'svod', 1, ['*'], 'guidedoc.tv'),
  P('docplay', 'DocPlay', 'svod', 1.2, ['*'], 'www.docplay.com'),
  P('bfi-player', 'BFI Player', 'svod', 3, ['@uk'], 'player.bfi.org.uk'),
  P('curzon-home-cinema', 'Curzon Home Cinema', 'tvod', 2.5, ['@uk'], 'www.curzon.com'),
  P('alleskino', 'alleskino', 'tvod', 1.2, ['@dach'], 'www.alleskino.de'),
  P('pantaflix', 'Pantaflix', 'tvod', 1.5, ['@dach'], 'www.pantaflix.com'),
  P('netzkino', 'Netzkino', 'avod', 3, ['@dach'], 'www.netzkino.de'),
  P('la-cinetek', 'LaCinetek', 'svod', 1, ['FR', 'BE', 'ES', 'IT', 'DE'], 'www.lacinetek.com'),
  P('cinemember', 'Cinemember', 'svod', 1.2, ['NL', 'BE'], 'www.cinemember.nl'),
  P('picl', 'Picl', 'tvod', 0.9, ['NL'], 'picl.nl'),
  P('cineasterna', 'Cineasterna', 'free', 1, ['SE', 'FI'], 'www.cineasterna.com'),
  P('filmfriend', 'filmfriend', 'free', 1.5, ['@dach', 'FI', 'SE'], 'www.filmfriend.de'),
  P('mymovies-one', 'MYmovies ONE', 'svod', 1.2, ['IT'], 'www.mymovies.it'),
  P('iwonderfull', 'IWonderfull', 'svod', 1, ['IT'], 'www.iwonderfull.it'),
  P('ondemandkorea', 'OnDemandKorea', 'avod', 2, ['@na', 'KR'], 'www.ondemandkorea.com'),
  P('kocowa', 'KOCOWA+', 'svod', 2, [...AMERICAS, 'KR'], 'www.kocowa.com'),
  P('pantaya', 'Pantaya', 'svod', 1.3, [...AMERICAS], 'www.pantaya.com'),
  P('cine-ar', 'Cine.Ar', 'free', 1.2, ['AR'], 'cine.ar'),
  P('retina-latina', 'Retina Latina', 'free', 1, ['@latam'], 'www.retinalatina.org'),
  P('mubi-go', 'MUBI GO', 'svod', 0.8, ['GB', 'IE', 'DE', 'IN', 'MX', 'TR'], 'mubi.com'),
  P('lionsgate-play', 'Lionsgate Play', 'svod', 5, ['IN', 'ID', 'TH', 'PH', 'VN'], 'www.lionsgateplay.com'),
  P('hbo-go-asia', 'HBO GO', 'svod', 8, ['ID', 'TH', 'PH', 'VN'], 'www.hbogoasia.com'),
  P('catchplay', 'CatchPlay+', 'svod', 4, ['ID', 'TH', 'PH', 'VN'], 'www.catchplay.com'),
  P('bilibili', 'Bilibili', 'avod', 4, ['ID', 'TH', 'PH', 'VN'], 'www.bilibili.tv'),
  P('tubi-latam', 'Tubi Latino', 'avod', 2, ['@latam', 'US'], 'tubitv.com'),
  P('plex-channels', 'Plex Channels', 'fast', 1.5, ['@na', '@uk', '@oceania'], 'watch.plex.tv'),
  P('rakuten-fast', 'Rakuten TV Channels', 'fast', 1.8, [...EU, '!@uk'], 'www.rakuten.tv'),
  P('samsung-tv-plus', 'Samsung TV Plus', 'fast', 6, ['*', '!NG', '!EG'], 'www.samsungtvplus.com'),
  P('lg-channels', 'LG Channels', 'fast', 4, ['*', '!NG', '!EG'], 'lgchannels.com'),
  P('runtime', 'Runtime', 'avod', 1.5, ['@latam', 'US', 'ES', 'PT'], 'runtime.tv'),
  P('rlaxx-tv', 'rlaxx TV', 'fast', 1.2, [...EU], 'rlaxx.tv'),
  P('sooner', 'Sooner', 'svod', 1.5, ['@dach', '@eu_west', '@eu_east'], 'sooner.de'),
  P('cultpix', 'Cultpix', 'svod', 0.9, ['*'], 'www.cultpix.com'),
  P('flixfling', 'FlixFling', 'tvod', 0.6, ['*'], 'www.flixfling.com'),
  P('nature-plus', 'Nature+', 'svod', 0.8, ['*'], 'www.natureplus.tv'),
  P('history-vault', 'History Vault', 'svod', 1.1, ['*'], 'www.historyvault.com'),
  P('bloody-disgusting', 'Bloody Disgusting', 'fast', 0.7, ['*'], 'bloody-disgusting.com'),
  P('yupp-flix', 'YuppFlix', 'svod', 0.9, ['IN', 'AE', 'SA', 'US', 'GB'], 'www.yupptv.com'),
  P('argo', 'Argo', 'svod', 0.8, ['*'], 'watchargo.com'),
  P('ovid', 'OVID', 'svod', 0.7, ['@na'], 'www.ovid.tv'),
  P('fandor', 'Fandor', 'svod', 0.8, ['*'], 'www.fandor.com'),
  P('chai-flicks', 'Chai Flicks', 'svod', 0.6, ['*'], 'chaiflicks.com'),
  P('tastemade', 'Tastemade', 'fast', 0.9, ['*'], 'www.tastemade.com'),
  P('up-faith-family', 'UP Faith & Family', 'svod', 0.8, ['@na', '@uk', '@oceania'], 'upfaithandfamily.com'),
  P('great-courses-signature', 'Wondrium', 'svod', 0.9, ['*'], 'www.wondrium.com'),
  P('fawesome', 'Fawesome', 'avod', 1.4, ['*'], 'fawesome.tv'),
  P('moviesaints', 'MovieSaints', 'svod', 0.6, ['*'], 'www.moviesaints.com'),
  P('shorts-tv', 'ShortsTV', 'svod', 0.8, ['*'], 'www.shorts.tv'),
  P('qello-concerts', 'Qello Concerts', 'svod', 0.9, ['*'], 'www.qello.com'),
  P('stingray-classica', 'Stingray Classica', 'svod', 0.7, ['*'], 'www.stingray.com'),
  P('marquee-tv', 'Marquee TV', 'svod', 0.8, ['*'], 'www.marquee.tv'),
  P('kidoodle-tv', 'Kidoodle.TV', 'avod', 1.1, ['*'], 'www.kidoodle.tv'),
  P('jolt-film', 'Jolt', 'svod', 0.6, ['*'], 'www.jolt.film'),
  P('hayu', 'hayu', 'svod', 3, ['@uk', '@oceania', '@nordic', 'CA', 'NL', 'BE', 'PL', 'PT', 'ZA', 'NG', 'PH'], 'www.hayu.com'),
  P('shemaroome', 'ShemarooMe', 'svod', 1.5, ['IN', 'AE', 'SA', 'US', 'GB', 'CA'], 'www.shemaroome.com'),
  P('kanal-d-drama', 'Kanal D Drama', 'avod', 1.2, ['*'], 'www.kanald-drama.com'),
  P('dw-documentary', 'DW Documentary', 'free', 1.6, ['*'], 'www.dw.com'),
  P('mometu', 'Mometu', 'avod', 0.6, ['*'], 'www.mometu.com'),
  P('wedo-tv', 'WeDo TV', 'avod', 0.7, ['*'], 'wedotv.com'),
  P('afrolandtv', 'AfroLandTV', 'avod', 0.8, ['@africa', 'US', 'GB'], 'www.afrolandtv.com'),
  P('nollywood-tv', 'Nollywood+', 'svod', 0.9, ['@africa', 'GB', 'US'], 'www.nollywoodplus.tv'),
  P('weyyak', 'Weyyak', 'avod', 1.5, ['@mena'], 'weyyak.com'),
  P('anghami-films', 'Anghami Films', 'svod', 0.7, ['@mena'], 'www.anghami.com'),
];

/** A channel partner sold as an add-on through several parent providers. */
export interface ChannelPartner {
  key: string;
  name: string;
  weight: number;
  where: readonly string[];
}

export const CHANNEL_PARTNERS: readonly ChannelPartner[] = [
  { key: 'paramount-plus', name: 'Paramount Plus', weight: 20, where: ['US', 'GB', 'DE', 'AT', 'FR', 'IT', 'CA', 'AU', '@latam'] },
  { key: 'mgm-plus', name: 'MGM Plus', weight: 12, where: ['US', 'DE', 'AT', 'GB', 'IT', 'FR', 'ES', 'CA'] },
  { key: 'starz', name: 'Starz', weight: 12, where: ['US', 'CA', 'IN', 'JP'] },
  { key: 'amc-plus', name: 'AMC+', weight: 10, where: ['US', 'CA', 'ES', 'GB'] },
  { key: 'britbox', name: 'BritBox', weight: 8, where: ['US', 'CA', 'AU'] },
  { key: 'acorn-tv', name: 'Acorn TV', weight: 7, where: ['US', 'CA', 'AU', 'GB'] },
  { key: 'shudder', name: 'Shudder', weight: 7, where: ['US', 'CA', 'GB', 'DE', 'AU'] },
  { key: 'mubi', name: 'MUBI', weight: 6, where: ['US', 'GB', 'DE', 'AT', 'FR', 'IT', 'ES', 'NL', 'JP', 'IN', 'MX', 'BR', 'CA', 'TR'] },
  { key: 'hallmark-movies-now', name: 'Hallmark+', weight: 6, where: ['US'] },
  { key: 'cinemax', name: 'Cinemax', weight: 6, where: ['US'] },
  { key: 'bet-plus', name: 'BET+', weight: 5, where: ['US'] },
  { key: 'curiosity-stream', name: 'Curiosity Stream', weight: 4, where: ['US', 'GB', 'DE', 'CA', 'AU'] },
  { key: 'sundance-now', name: 'Sundance Now', weight: 4, where: ['US', 'CA'] },
  { key: 'crunchyroll', name: 'Crunchyroll', weight: 6, where: ['US', 'GB', 'DE', 'FR', 'IT', 'ES', 'MX', 'BR', 'IN'] },
  { key: 'hidive', name: 'HIDIVE', weight: 3, where: ['US', 'CA', 'GB'] },
  { key: 'screambox', name: 'Screambox', weight: 3, where: ['US', 'CA', 'GB'] },
  { key: 'arthouse-cnma', name: 'Arthouse CNMA', weight: 2, where: ['DE', 'AT'] },
  { key: 'filmtastic', name: 'Filmtastic', weight: 2.5, where: ['DE', 'AT'] },
  { key: 'home-of-horror', name: 'Home of Horror', weight: 2, where: ['DE', 'AT'] },
  { key: 'alleskino', name: 'alleskino', weight: 1.5, where: ['DE', 'AT'] },
  { key: 'studiocanal-presents', name: 'Studiocanal Presents', weight: 2.5, where: ['DE', 'AT', 'GB', 'FR', 'NL'] },
  { key: 'cinema-of-hearts', name: 'Cinema of Hearts', weight: 1.5, where: ['DE', 'AT'] },
  { key: 'lionsgate-plus', name: 'Lionsgate+', weight: 5, where: ['US', 'GB', 'DE', 'FR', 'IT', 'ES', 'IN', 'BR', 'MX', 'JP'] },
  { key: 'universal-plus', name: 'Universal+', weight: 4, where: ['MX', 'BR', 'AR', 'CO', 'CL'] },
  { key: 'ocs', name: 'OCS', weight: 4, where: ['FR'] },
  { key: 'infinity-selection', name: 'Infinity Selection', weight: 3, where: ['IT'] },
  { key: 'atresplayer-premium', name: 'Atresplayer Premium', weight: 3, where: ['ES'] },
  { key: 'filmin', name: 'Filmin', weight: 3, where: ['ES', 'MX'] },
  { key: 'discovery-plus', name: 'discovery+', weight: 5, where: ['US', 'GB', 'IT', 'DE', 'IN'] },
  { key: 'historyplay', name: 'HISTORY Play', weight: 3, where: ['DE', 'AT', 'IT', 'ES'] },
  { key: 'eros-now', name: 'Eros Now', weight: 3, where: ['IN', 'AE', 'GB', 'US'] },
  { key: 'hoichoi', name: 'hoichoi', weight: 2, where: ['IN'] },
  { key: 'manoramamax', name: 'ManoramaMAX', weight: 2, where: ['IN'] },
  { key: 'docsville', name: 'Docsville', weight: 1, where: ['US', 'GB', 'DE'] },
  { key: 'gaia', name: 'Gaia', weight: 1.2, where: ['US', 'CA', 'GB'] },
  { key: 'kocowa', name: 'KOCOWA', weight: 2, where: ['US', 'CA', 'MX', 'BR'] },
  { key: 'viaplay', name: 'Viaplay', weight: 4, where: ['NL', 'GB'] },
  { key: 'nhk-world-premium', name: 'NHK World Premium', weight: 2, where: ['JP', 'US'] },
];

/** Parents that sell add-on channels, the countries where they do, and how likely each partner is. */
export const CHANNEL_PARENTS: ReadonlyArray<{ parent: string; prefix: string; suffix: string; where: readonly string[]; share: number }> = [
  { parent: 'amazon-prime-video', prefix: 'amazon-channel', suffix: 'Amazon Channel', where: ['US', 'GB', 'DE', 'AT', 'FR', 'IT', 'ES', 'CA', 'JP', 'IN', 'MX', 'BR', 'NL', 'AU', 'IE', 'SE', 'AR', 'CO', 'CL', 'TR'], share: 0.95 },
  { parent: 'apple-tv', prefix: 'apple-tv-channel', suffix: 'Apple TV Channel', where: ['US', 'GB', 'DE', 'AT', 'FR', 'IT', 'ES', 'CA', 'AU', 'IE', 'NL', 'MX', 'BR'], share: 0.6 },
  { parent: 'the-roku-channel', prefix: 'roku-premium-channel', suffix: 'Roku Premium Channel', where: ['US', 'CA', 'GB', 'MX'], share: 0.55 },
  { parent: 'youtube', prefix: 'youtube-primetime-channel', suffix: 'YouTube Primetime Channel', where: ['US'], share: 0.5 },
];
