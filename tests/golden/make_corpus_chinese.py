#!/usr/bin/env python3
"""Generate tests/golden/corpus_chinese.jsonl deterministically (no randomness).

Usage (from /work/main):  python3 tests/golden/make_corpus_chinese.py
The corpus of the chinese_convert_mapper goldens: Simplified and Traditional (Taiwan, Hong Kong) Chinese
prose where OpenCC's phrase dictionaries decide the result (头发/發, 干/幹/乾, 后/後, 面/麵, 里/裡/裏,
Taiwan and Hong Kong vocabulary such as 软件/軟體, 鼠标/滑鼠, 出租车/計程車/的士), Japanese text in new and
old kanji for the jp modes, mixed with English, code, emoji and edge cases (empty text, a NUL, CRLF).
Each row is {"text": ..., "meta": {"source": ..., "id": N}}; `id` is the 0-based line number.
"""
import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus_chinese.jsonl")

rows = []  # (source, text)


def add(source, text):
    rows.append((source, text))


# ---------------------------------------------------------------- Simplified Chinese
add("zh-hans/news", "国务院总理昨天在北京主持召开常务会议，部署进一步推动经济发展和扩大内需的措施。")
add("zh-hans/prose", "她的头发很长，每天早上都要花半个小时梳头。后来她去理发店剪了个短发，发现自己更喜欢这个发型。")
add("zh-hans/prose", "干部们在会上说：天气太干燥了，大家多喝水；干完活以后一起去干杯！衣服已经晾干了，桌子也擦干净了。")
add("zh-hans/prose", "皇后在后宫里等待皇帝回来，以后的日子谁也说不准。前后左右都是人，后面的人往前挤。")
add("zh-hans/food", "我中午吃了一碗牛肉面，面条很劲道；晚上想吃方便面，再买一包面粉做饺子。这个人很爱面子。")
add("zh-hans/tech", "这个软件可以帮你管理内存和硬盘，用鼠标点击打印机图标就能打印。请在网络设置里输入服务器地址。")
add("zh-hans/tech", "我们的视频博客介绍了最新的移动互联网应用程序，欢迎大家在U盘里下载源代码。默认字体是宋体。")
add("zh-hans/daily", "我坐出租车去超市买了土豆、西红柿和冰淇淋，又坐公交车回家，骑自行车太累了。")
add("zh-hans/daily", "里面的人说：这里的钟表都停了，几点钟了？我要去图书馆借一本关于历史的书。")
add("zh-hans/daily", "他一个人住在山里，只有一只狗陪着他。着急也没用，他总是着眼于长远的目标。")
add("zh-hans/daily", "请把这份文件复印三份，并发送到我的邮箱。只是一个小问题，发生了什么？")
add("zh-hans/idiom", "卧虎藏龙、千里之行始于足下、覆水难收、丢三落四、一干二净、开门见山。")
add("zh-hans/science", "台风过后，气象台发布了暴雨预警；云层里的水汽凝结成雨，乌云密布。")
add("zh-hans/science", "这种药物的副作用包括头晕、恶心和乏力，请遵医嘱服用，不要自行增减剂量。")
add("zh-hans/mixed", "Python 3.12 发布了！新版本的解释器速度更快，type hints 也更强大。详情见 https://docs.python.org 。")
add("zh-hans/mixed", "Meeting notes: 明天下午三点在会议室讨论项目进度，请准备好 PPT 和数据报表。Thanks!")
add("zh-hans/mixed", "代码示例：\n```python\nprint(\"你好，世界\")  # 输出问候语\n```\n运行后会显示结果。")
add("zh-hans/ecommerce", "【限时特价】苹果手机壳 只要9.9元！！！包邮 👍 快来抢购吧～ 数量有限，先到先得。")
add("zh-hans/forum", "楼主说得对，这个游戏的画面太棒了😂，就是服务器经常掉线，希望官方尽快修复。")
add("zh-hans/poem", "床前明月光，疑是地上霜。举头望明月，低头思故乡。")
add("zh-hans/law", "第一条 为了规范数据处理活动，保障数据安全，促进数据开发利用，保护个人、组织的合法权益，制定本法。")
add("zh-hans/finance", "据统计，今年前三季度全国规模以上工业企业实现利润总额同比增长百分之五点一，制造业投资保持较快增长。")

# ---------------------------------------------------------------- Traditional Chinese (Taiwan)
add("zh-hant-tw/news", "行政院今天召開記者會，說明颱風過後的災後重建計畫，並呼籲民眾注意防範土石流。")
add("zh-hant-tw/tech", "這個軟體可以幫你管理記憶體和硬碟，用滑鼠點擊印表機圖示就能列印。請在網路設定裡輸入伺服器位址。")
add("zh-hant-tw/daily", "我搭計程車去超市買了馬鈴薯、番茄和冰淇淋，又搭公車回家，騎腳踏車太累了。")
add("zh-hant-tw/prose", "她的頭髮很長，每天早上都要花半個小時梳頭。後來她去理髮店剪了個短髮。")
add("zh-hant-tw/prose", "乾燥的天氣讓人口乾舌燥，幹部們幹完活以後一起乾杯。")
add("zh-hant-tw/food", "我中午吃了一碗牛肉麵，麵條很有嚼勁；這個人很愛面子。")
add("zh-hant-tw/mixed", "資訊工程系的同學正在寫 Rust 程式，他們說記憶體安全很重要。影片已上傳到部落格。")
add("zh-hant-tw/daily", "裡面的人說：這裡的鐘錶都停了，幾點鐘了？我們一起去看電影吧。")

# ---------------------------------------------------------------- Traditional Chinese (Hong Kong)
add("zh-hant-hk/daily", "我搭的士去旺角，再轉巴士返屋企，沿途見到好多人排隊買蛋撻。")
add("zh-hant-hk/news", "衞生署今日公布，本港新增個案主要與外地輸入有關，市民應保持警覺，勤洗手。")
add("zh-hant-hk/prose", "佢着住一件黑色外套，喺裏面等咗成個鐘，啟德機場嘅舊址而家變咗郵輪碼頭。")
add("zh-hant-hk/prose", "呢條綫路經過尖沙咀同埋銅鑼灣，平日繁忙時間班次好密。")

# ---------------------------------------------------------------- Japanese
add("ja/shinjitai", "日本の芸術と国際交流について、図書館で資料を調べました。学校の先生も気になるようです。")
add("ja/shinjitai", "広島と沢田さんの家の桜が満開です。竜の絵が描かれた亜細亜の地図を見ました。")
add("ja/shinjitai", "東京駅から新幹線に乗って大阪へ行きます。駅弁を買って、車窓から富士山を眺めました。")
add("ja/shinjitai", "経済産業省は円安の影響について発表した。担当者は「状況を注視している」と述べた。")
add("ja/kyujitai", "藝術と國際交流について、圖書館で資料を調べました。學校の先生も氣になるやうです。")
add("ja/kyujitai", "廣島と澤田さんの家の櫻が滿開です。龍の繪が描かれた亞細亞の地圖を見ました。")
add("ja/kyujitai", "東京驛から新幹線に乘つて大阪へ行きます。驛辨を買つて、車窓から富士山を眺めました。")
add("ja/mixed", "この API は JSON を返します。エラーの場合は HTTP 500 と「内部エラー」のメッセージが返ります。")

# ---------------------------------------------------------------- other languages and edge cases
add("en", "The quick brown fox jumps over the lazy dog. No Chinese characters here at all.")
add("ko", "한국어 문장입니다. 漢字도 조금 섞여 있습니다: 大韓民國, 國語, 學校.")
add("edge/empty", "")
add("edge/space", "   \t  ")
add("edge/nul", "头发\x00后面的内容被截断")
add("edge/crlf", "第一行：头发\r\n第二行：干燥\r\n第三行：后来")
add("edge/punct", "“你好”，他说。「這是引號」『雙重引號』……——！？（括号）【方括号】")
add("edge/fullwidth", "ＡＢＣ１２３，全角字母和数字；半角 ABC123。")
add("edge/numbers", "2024年10月1日，第12届，共计1,234,567人次，增长3.5%。")
add("edge/single", "发")
add("edge/single", "後")
add("edge/rare", "𠮷野家的𩸽很好吃，㓦划、龘靐也是汉字。")
add("edge/variants", "着眼于未来，著名作家著书立说；台湾、臺灣、颱風、台风。")
add("zh-hans/long", "随着人工智能技术的快速发展，大规模语言模型在自然语言处理领域取得了显著的进展。" * 20
    + "后来，研究人员发现数据质量对模型性能的影响比预想的更大，于是开始重视数据清洗与去重。" * 20)
add("zh-hant/long", "隨著人工智慧技術的快速發展，大型語言模型在自然語言處理領域取得了顯著的進展。" * 20)

with open(OUT, "w", encoding="utf-8", newline="\n") as f:
    for i, (source, text) in enumerate(rows):
        f.write(json.dumps({"text": text, "meta": {"source": source, "id": i}}, ensure_ascii=False) + "\n")
print(f"{OUT}: {len(rows)} rows")
